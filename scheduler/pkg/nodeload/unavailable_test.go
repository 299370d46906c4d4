package nodeload

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/usage"
)

func nodeInfos(names ...string) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, len(names))
	for i, n := range names {
		ni := framework.NewNodeInfo()
		ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
		out[i] = ni
	}
	return out
}

// Unavailable agrees with Lookup node by node, and follows each new
// snapshot although it works the answers out once per snapshot.
func TestUnavailableFollowsEachSnapshot(t *testing.T) {
	tr := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry()})
	nodes := nodeInfos("ok", "stale", "nan", "new")
	first := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"ok":    {Node: "ok", Windows: stats(40)},
		"stale": {Node: "stale", Stale: true, Windows: stats(40)},
		"nan":   {Node: "nan", Windows: stats(math.NaN())},
	}}
	second := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"ok":    {Node: "ok", Stale: true, Windows: stats(40)},
		"stale": {Node: "stale", Windows: stats(40)},
		"nan":   {Node: "nan", Windows: stats(50)},
		"new":   {Node: "new", Windows: stats(10)},
	}}
	tests := []struct {
		name   string
		snap   *usage.Snapshot
		window usage.Window
		want   map[Cause]int
	}{
		{name: "first snapshot", snap: first, window: usage.Window5m, want: map[Cause]int{CauseStale: 1, CauseInvalid: 1, CauseMissing: 1}},
		{name: "first snapshot again", snap: first, window: usage.Window5m, want: map[Cause]int{CauseStale: 1, CauseInvalid: 1, CauseMissing: 1}},
		{name: "a window the snapshot lacks", snap: first, window: usage.Window15m, want: map[Cause]int{CauseStale: 1, CauseMissing: 3}},
		{name: "next snapshot", snap: second, window: usage.Window5m, want: map[Cause]int{CauseStale: 1}},
		{name: "no snapshot", snap: nil, window: usage.Window5m, want: map[Cause]int{CauseMissing: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tr.Unavailable(tt.snap, nodes, tt.window, usage.CPU, usage.Memory)
			if len(tt.want) == 0 {
				tt.want = nil
			}
			if diff := cmp.Diff(tt.want, got.Nodes); diff != "" {
				t.Errorf("unavailable nodes per cause (-want,+got):\n%s", diff)
			}
			// Node by node, the same as Lookup.
			for _, n := range nodes {
				name := n.Node().Name
				_, want := Lookup(tt.snap, name, tt.window, usage.CPU, usage.Memory)
				if want != CauseNone && got.Example[want] == "" {
					t.Errorf("%s: Lookup says %s, Unavailable has no example of it", name, want)
				}
			}
		})
	}
}

// A node's view answers as Lookup and NodeUsage.Get do, for every window,
// resource list and kind of node.
func TestViewsAgreeWithLookup(t *testing.T) {
	for i, r := range usage.Resources {
		if resourceIndex(r) != i {
			t.Fatalf("resourceIndex(%s) = %d, want its place in usage.Resources, %d", r, resourceIndex(r), i)
		}
	}
	cpuOnly := map[usage.Window]map[usage.Resource]usage.Stats{usage.Window5m: {usage.CPU: {Avg: 10, P95: 12, Latest: 11, Samples: 2}}}
	nanStd := stats(30)
	s := nanStd[usage.Window5m][usage.Memory]
	s.Std = math.NaN()
	nanStd[usage.Window5m][usage.Memory] = s
	snap := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"ok":       {Node: "ok", Windows: stats(40)},
		"stale":    {Node: "stale", Stale: true, Windows: stats(40)},
		"refused":  {Node: "refused", Stale: true, Invalid: "out of range", Windows: stats(40)},
		"nan":      {Node: "nan", Windows: stats(math.NaN())},
		"nan-std":  {Node: "nan-std", Windows: nanStd},
		"cpu-only": {Node: "cpu-only", Windows: cpuOnly},
	}}
	tr := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry()})
	for _, w := range []usage.Window{usage.Window5m, usage.Window15m} {
		views := tr.Views(snap, w)
		if again := tr.Views(snap, w); again != views {
			t.Errorf("window %s: views built twice for one snapshot", w)
		}
		for _, node := range []string{"ok", "stale", "refused", "nan", "nan-std", "cpu-only", "absent"} {
			v, ok := views.Node(node)
			nu, inSnap := snap.Nodes[node]
			if ok != inSnap {
				t.Errorf("%s: view present = %v, want %v", node, ok, inSnap)
				continue
			}
			for _, rs := range [][]usage.Resource{{usage.CPU}, {usage.Memory}, {usage.CPU, usage.Memory}, {usage.Memory, usage.CPU}} {
				_, want := Lookup(snap, node, w, rs...)
				got := CauseMissing
				if ok {
					got = v.Cause(rs...)
				}
				if got != want {
					t.Errorf("%s, window %s, %v: cause %q, Lookup says %q", node, w, rs, got, want)
				}
			}
			if !ok {
				continue
			}
			if v.Fresh != !nu.Stale || !v.SampleTime.Equal(nu.SampleTime) {
				t.Errorf("%s: fresh %v at %v, want %v at %v", node, v.Fresh, v.SampleTime, !nu.Stale, nu.SampleTime)
			}
			for _, r := range usage.Resources {
				gs, gok := v.Stats(r)
				ws, wok := nu.Get(w, r)
				if gok != wok || (gok && gs != ws && !math.IsNaN(ws.Avg) && !math.IsNaN(ws.Std)) {
					t.Errorf("%s, window %s, %s: stats %+v %v, want %+v %v", node, w, r, gs, gok, ws, wok)
				}
			}
		}
	}
	if tr.Views(nil, usage.Window5m) != nil {
		t.Error("views of no snapshot, want nil")
	}
}
