package usageawarefit

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

func TestFilter(t *testing.T) {
	// Every node has 4 CPUs and 8Gi, with 3800m and 7Gi already requested.
	stats := map[string]plugintest.NodeStats{
		"idle":  {CPU: 20, CPUP95: 30, Memory: 30, MemoryP95: 40},
		"busy":  {CPU: 70, CPUP95: 75, Memory: 30, MemoryP95: 40},
		"stale": {CPU: 5, Memory: 5, Stale: true},
	}
	var nodes []*v1.Node
	var pods []*v1.Pod
	for _, n := range []string{"idle", "busy", "stale", "unknown"} {
		nodes = append(nodes, plugintest.Node(n, "4", "8Gi", 110))
		pods = append(pods, plugintest.Pod("existing-"+n, n, "3800m", "7Gi"))
	}
	tests := []struct {
		name        string
		args        *config.UsageAwareFitArgs
		pod         *v1.Pod
		node        string
		wantCode    fwk.Code
		wantReasons []string
	}{
		{
			// fits by requests: 3800m + 100m ≤ 4000m
			name: "fits by requests", pod: plugintest.Pod("p", "", "100m", "100Mi"), node: "busy",
			wantCode: fwk.Success,
		},
		{
			// 3800m + 500m = 4300m ≤ 1.5 × 4000m; p95 30 % + 500m/4000m = 42.5 % ≤ 80 %
			name: "cpu beyond requests on an idle node", pod: plugintest.Pod("p", "", "500m", ""), node: "idle",
			wantCode: fwk.Success,
		},
		{
			// p95 75 % + 12.5 % = 87.5 % > 80 %
			name: "cpu beyond requests on a busy node", pod: plugintest.Pod("p", "", "500m", ""), node: "busy",
			wantCode:    fwk.Unschedulable,
			wantReasons: []string{"Insufficient cpu: requests exceed allocatable and predicted usage 87.5 is above maxUsage 80 (percent of allocatable)"},
		},
		{
			// 3800m + 2500m = 6300m > 6000m
			name: "beyond the overcommit ratio", pod: plugintest.Pod("p", "", "2500m", ""), node: "idle",
			wantCode:    fwk.Unschedulable,
			wantReasons: []string{"Insufficient cpu: requests 3800 + 2500 exceed 1.5× allocatable 4000"},
		},
		{
			// 7Gi + 2Gi = 9Gi ≤ 1.2 × 8Gi = 9.6Gi; p95 40 % + 25 % = 65 % ≤ 80 %
			name: "memory beyond requests", pod: plugintest.Pod("p", "", "", "2Gi"), node: "idle",
			wantCode: fwk.Success,
		},
		{
			name: "stale usage falls back to requests", pod: plugintest.Pod("p", "", "500m", ""), node: "stale",
			wantCode: fwk.Unschedulable, wantReasons: []string{"Insufficient cpu"},
		},
		{
			name: "no usage falls back to requests", pod: plugintest.Pod("p", "", "500m", ""), node: "unknown",
			wantCode: fwk.Unschedulable, wantReasons: []string{"Insufficient cpu"},
		},
		{
			name: "no overcommit configured for memory",
			args: &config.UsageAwareFitArgs{MaxOvercommit: map[usage.Resource]float64{usage.CPU: 2}},
			pod:  plugintest.Pod("p", "", "", "2Gi"), node: "idle",
			wantCode: fwk.Unschedulable, wantReasons: []string{"Insufficient memory"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tracker := nodeload.NewTracker(&plugintest.Source{Snap: plugintest.Snapshot(time.Now(), stats)}, nodeload.Options{Registerer: prometheus.NewRegistry()})
			factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
				return New(ctx, tt.args, h, tracker)
			}
			fw := plugintest.NewFramework(t, Name, factory, []string{"PreFilter", "Filter"}, nodes, pods)
			ctx := context.Background()
			state := framework.NewCycleState()
			if _, st, _ := fw.RunPreFilterPlugins(ctx, state, tt.pod); !st.IsSuccess() {
				t.Fatalf("PreFilter: %v", st)
			}
			st := fw.RunFilterPlugins(ctx, state, tt.pod, fw.NodeInfo(t, tt.node))
			if st.Code() != tt.wantCode {
				t.Fatalf("code = %v (%v), want %v", st.Code(), st.Reasons(), tt.wantCode)
			}
			if tt.wantCode != fwk.Success {
				if diff := cmp.Diff(tt.wantReasons, st.Reasons()); diff != "" {
					t.Errorf("reasons (-want,+got):\n%s", diff)
				}
			}
			admitted := testutil.ToFloat64(tracker.Metrics().Overcommitted.WithLabelValues("cpu")) + testutil.ToFloat64(tracker.Metrics().Overcommitted.WithLabelValues("memory"))
			if wantAdmitted := tt.wantCode == fwk.Success && !strings.HasPrefix(tt.name, "fits"); (admitted > 0) != wantAdmitted {
				t.Errorf("overcommit counter = %v, want counted: %v", admitted, wantAdmitted)
			}
		})
	}
}

func TestSignPod(t *testing.T) {
	tracker := nodeload.NewTracker(&plugintest.Source{}, nodeload.Options{Registerer: prometheus.NewRegistry()})
	factory := func(ctx context.Context, _ runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return New(ctx, nil, h, tracker)
	}
	fw := plugintest.NewFramework(t, Name, factory, []string{"PreFilter", "Filter"}, []*v1.Node{plugintest.Node("n1", "4", "8Gi", 110)}, nil)
	base := fw.Signature(t, plugintest.Pod("a", "", "500m", "1Gi"))
	if fw.Signature(t, plugintest.Pod("b", "", "500m", "1Gi")) != base {
		t.Error("two pods with the same requests have different signatures")
	}
	for _, p := range []*v1.Pod{plugintest.Pod("c", "", "600m", "1Gi"), plugintest.Pod("d", "", "500m", "2Gi")} {
		if fw.Signature(t, p) == base {
			t.Errorf("pod %s has other requests and the same signature", p.Name)
		}
	}
}
