package nodeload

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// nodeInfos returns NodeInfos of nodes with 4 CPUs and 8Gi, as the
// scheduler's snapshot lists them.
func nodeInfos(names ...string) []fwk.NodeInfo {
	out := make([]fwk.NodeInfo, len(names))
	for i, n := range names {
		ni := framework.NewNodeInfo()
		list := v1.ResourceList{v1.ResourceCPU: resource.MustParse("4"), v1.ResourceMemory: resource.MustParse("8Gi")}
		ni.SetNode(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}, Status: v1.NodeStatus{Allocatable: list, Capacity: list}})
		out[i] = ni
	}
	return out
}

// A table answers node by node as Lookup and NodeUsage.Get do, for every
// window, resource list and kind of node, follows each new snapshot
// although it works the answers out once per snapshot, and counts the
// nodes without usable usage once.
func TestTableAgreesWithLookup(t *testing.T) {
	cpuOnly := map[usage.Window]map[usage.Resource]usage.Stats{usage.Window5m: {usage.CPU: {Avg: 10, P95: 12, Latest: 11, Samples: 2}}}
	nanStd := stats(30)
	s := nanStd[usage.Window5m][usage.Memory]
	s.Std = math.NaN()
	nanStd[usage.Window5m][usage.Memory] = s
	first := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"ok":       {Node: "ok", SampleTime: t0, Windows: stats(40)},
		"stale":    {Node: "stale", Stale: true, Windows: stats(40)},
		"refused":  {Node: "refused", Stale: true, Invalid: "out of range", Windows: stats(40)},
		"nan":      {Node: "nan", Windows: stats(math.NaN())},
		"nan-std":  {Node: "nan-std", Windows: nanStd},
		"cpu-only": {Node: "cpu-only", Windows: cpuOnly},
	}}
	second := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"ok":    {Node: "ok", Stale: true, Windows: stats(40)},
		"stale": {Node: "stale", Windows: stats(40)},
		"nan":   {Node: "nan", Windows: stats(50)},
		"new":   {Node: "new", Windows: stats(10)},
	}}
	nodes := nodeInfos("ok", "stale", "refused", "nan", "nan-std", "cpu-only", "new")
	tr := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry(), Now: (&fakeClock{t: t0}).now})
	tests := []struct {
		name   string
		snap   *usage.Snapshot
		window usage.Window
		want   map[Cause]int // nodes without usable cpu and memory
	}{
		{name: "first snapshot", snap: first, window: usage.Window5m,
			want: map[Cause]int{CauseStale: 1, CauseInvalid: 3, CauseMissing: 2}},
		{name: "first snapshot again", snap: first, window: usage.Window5m,
			want: map[Cause]int{CauseStale: 1, CauseInvalid: 3, CauseMissing: 2}},
		{name: "a window the snapshot lacks", snap: first, window: usage.Window15m,
			want: map[Cause]int{CauseStale: 1, CauseInvalid: 1, CauseMissing: 5}},
		{name: "next snapshot", snap: second, window: usage.Window5m,
			want: map[Cause]int{CauseStale: 1, CauseMissing: 3}},
		{name: "no snapshot", snap: nil, window: usage.Window5m, want: map[Cause]int{CauseMissing: 7}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tb := tr.Table(tt.snap, nodes, tt.window, flat)
			if again := tr.Table(tt.snap, nodes, tt.window, flat); again != tb {
				t.Errorf("table built twice for one snapshot")
			}
			u := tb.Unavailable(usage.CPU, usage.Memory)
			if diff := cmp.Diff(tt.want, u.Nodes); diff != "" {
				t.Errorf("unavailable nodes per cause (-want,+got):\n%s", diff)
			}
			for _, n := range nodes {
				name := n.Node().Name
				e := tb.Node(n, t0.UnixNano())
				if e.Name != name {
					t.Fatalf("entry of %s is %s's", name, e.Name)
				}
				var nu usage.NodeUsage
				inSnap := false
				if tt.snap != nil {
					nu, inSnap = tt.snap.Nodes[name]
				}
				for _, rs := range [][]usage.Resource{{usage.CPU}, {usage.Memory}, {usage.CPU, usage.Memory}, {usage.Memory, usage.CPU}} {
					if _, want := Lookup(tt.snap, name, tt.window, rs...); e.Cause(rs...) != want {
						t.Errorf("%s, %v: cause %q, Lookup says %q", name, rs, e.Cause(rs...), want)
					}
				}
				if !inSnap {
					if e.Fresh {
						t.Errorf("%s: no usage, yet fresh", name)
					}
					continue
				}
				if e.Fresh != !nu.Stale || !e.SampleTime.Equal(nu.SampleTime) {
					t.Errorf("%s: fresh %v at %v, want %v at %v", name, e.Fresh, e.SampleTime, !nu.Stale, nu.SampleTime)
				}
				for _, r := range usage.Resources {
					gs, gok := e.Stats(r)
					ws, wok := nu.Get(tt.window, r)
					if gok != wok || (gok && gs != ws && !math.IsNaN(ws.Avg) && !math.IsNaN(ws.Std)) {
						t.Errorf("%s, %s: stats %+v %v, want %+v %v", name, r, gs, gok, ws, wok)
					}
				}
			}
		})
	}
}

// A table's entries count the pods bound since each node's sample, and
// follow them as they land, leave and expire, without a new table.
func TestTableFollowsPendingPods(t *testing.T) {
	clock := &fakeClock{t: t0}
	tr := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry(), Now: clock.now, Expiry: 20 * time.Minute})
	nodes := nodeInfos("n1", "n2")
	snap := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"n1": {Node: "n1", SampleTime: t0.Add(-time.Minute), Windows: stats(10)},
		"n2": {Node: "n2", SampleTime: t0.Add(-time.Minute), Windows: stats(10)},
	}}
	tb := tr.Table(snap, nodes, usage.Window5m, flat)
	pending := func(node int) int64 {
		t.Helper()
		return tb.Node(nodes[node], clock.t.UnixNano()).Pending.MilliCPU
	}
	if pending(0) != 0 || pending(1) != 0 {
		t.Fatalf("pending before any pod: %d, %d, want none", pending(0), pending(1))
	}

	tr.Pending().Assume(boundPod("a", ""), "n1", nil)
	tr.Pending().Assume(boundPod("b", ""), "n1", nil)
	if got := pending(0); got != 2000 {
		t.Errorf("n1 after two pods landed: pending %d m, want 2000", got)
	}
	// Reported again by the informer, now running since the reservation:
	// nothing changes.
	running := boundPod("a", "n1")
	running.Status.StartTime = &metav1.Time{Time: t0}
	tr.Pending().Observe(running)
	if got := pending(0); got != 2000 {
		t.Errorf("n1 after the informer saw a: pending %d m, want 2000", got)
	}
	// Moved (unreserved, placed elsewhere) and deleted.
	tr.Pending().Forget("b")
	tr.Pending().Assume(boundPod("b", ""), "n2", nil)
	if pending(0) != 1000 || pending(1) != 1000 {
		t.Errorf("after b moved to n2: pending %d, %d m, want 1000 each", pending(0), pending(1))
	}
	// Twenty minutes on, both have expired: the entries notice on their own.
	clock.step(20*time.Minute + time.Second)
	if pending(0) != 0 || pending(1) != 0 {
		t.Errorf("after expiry: pending %d, %d m, want none", pending(0), pending(1))
	}
	if again := tr.Table(snap, nodes, usage.Window5m, flat); again != tb {
		t.Errorf("pending pods rebuilt the table; they should change its entries")
	}
}

// A NodeInfo that is not the snapshot's own (a copy for preemption) gets the
// same figures, looked up by name; another node list gets another index.
func TestTableFindsCopiesAndNewNodes(t *testing.T) {
	tr := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry(), Now: (&fakeClock{t: t0}).now})
	snap := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{
		"n1": {Node: "n1", SampleTime: t0.Add(-time.Minute), Windows: stats(10)},
		"n2": {Node: "n2", SampleTime: t0.Add(-time.Minute), Windows: stats(20)},
	}}
	nodes := nodeInfos("n1")
	tr.Pending().Assume(boundPod("a", ""), "n1", nil)
	tb := tr.Table(snap, nodes, usage.Window5m, flat)
	own := tb.Node(nodes[0], t0.UnixNano())
	copied := tb.Node(nodes[0].Snapshot(), t0.UnixNano())
	if diff := cmp.Diff(own, copied, cmp.AllowUnexported(NodeEntry{})); diff != "" {
		t.Errorf("a copy's entry differs (-own,+copy):\n%s", diff)
	}
	if own.Pending != (loadmodel.Amount{MilliCPU: 1000, Memory: 1000}) {
		t.Errorf("n1 pending %+v, want the one pod", own.Pending)
	}

	more := append(nodeInfos("n2"), nodes...)
	tb2 := tr.Table(snap, more, usage.Window5m, flat)
	if tb2 == tb {
		t.Fatal("a new node list kept the old table")
	}
	if e := tb2.Node(more[0], t0.UnixNano()); e.Name != "n2" || !e.Fresh {
		t.Errorf("the new node's entry: %+v", e)
	}
	if e := tb2.Node(more[1], t0.UnixNano()); e.Name != "n1" || e.Pending.MilliCPU != 1000 {
		t.Errorf("n1's entry in the new table: %+v", e)
	}
}
