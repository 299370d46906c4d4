package podcountbalance

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

func podsOn(node string, n int) []*v1.Pod {
	var out []*v1.Pod
	for i := 0; i < n; i++ {
		out = append(out, plugintest.Pod(fmt.Sprintf("%s-%d", node, i), node, "", ""))
	}
	return out
}

func TestScore(t *testing.T) {
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		want  map[string]int64
	}{
		{
			// free 89 / 93 / 85 of 110: 100×89/93 = 95, 100, 100×85/93 = 91
			name:  "21, 17 and 25 pods",
			nodes: []*v1.Node{plugintest.Node("node1", "4", "8Gi", 110), plugintest.Node("node2", "4", "8Gi", 110), plugintest.Node("node3", "4", "8Gi", 110)},
			pods:  append(append(podsOn("node1", 21), podsOn("node2", 17)...), podsOn("node3", 25)...),
			want:  map[string]int64{"node1": 95, "node2": 100, "node3": 91},
		},
		{
			// a new empty node has 110 free against 10 free on the busy one: 100 vs 9
			name:  "new node wins",
			nodes: []*v1.Node{plugintest.Node("busy", "4", "8Gi", 110), plugintest.Node("new", "4", "8Gi", 110)},
			pods:  podsOn("busy", 100),
			want:  map[string]int64{"busy": 9, "new": 100},
		},
		{
			// free 10 and 0 (full, never negative): 100 and 0
			name:  "full node",
			nodes: []*v1.Node{plugintest.Node("a", "4", "8Gi", 12), plugintest.Node("full", "4", "8Gi", 3)},
			pods:  append(podsOn("a", 2), podsOn("full", 4)...),
			want:  map[string]int64{"a": 100, "full": 0},
		},
		{
			name:  "every node full",
			nodes: []*v1.Node{plugintest.Node("a", "4", "8Gi", 1)},
			pods:  podsOn("a", 1),
			want:  map[string]int64{"a": 0},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := plugintest.NewFramework(t, Name, New, []string{"Score"}, tt.nodes, tt.pods)
			got := fw.Scores(t, framework.NewCycleState(), plugintest.Pod("new-pod", "", "", ""))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSignPod(t *testing.T) {
	fw := plugintest.NewFramework(t, Name, New, []string{"Score"}, []*v1.Node{plugintest.Node("n1", "4", "8Gi", 110)}, nil)
	// The score does not depend on the pod: the signature holds only what
	// the framework itself adds (the scheduler name).
	if a, b := fw.Signature(t, plugintest.Pod("a", "", "100m", "")), fw.Signature(t, plugintest.Pod("b", "", "2", "4Gi")); a != b {
		t.Errorf("signatures differ: %s and %s", a, b)
	}
}
