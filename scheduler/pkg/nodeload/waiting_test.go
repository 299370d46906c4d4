package nodeload

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// under90 passes a node whose mean CPU plus pending pods and the pod stays
// at or under 90 %, and a node without usage, as LoadAware's Filter does.
func under90(e *NodeEntry, alloc, est loadmodel.Amount) bool {
	st, ok := e.Stats(usage.CPU)
	if !e.Fresh || !ok {
		return true
	}
	return st.Avg+loadmodel.Percent(e.Pending.MilliCPU+est.MilliCPU, alloc.MilliCPU) <= 90
}

// cpuAt returns a snapshot of nodes at the given mean CPU.
func cpuAt(cpu map[string]float64) *usage.Snapshot {
	snap := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{}}
	for n, v := range cpu {
		snap.Nodes[n] = usage.NodeUsage{Node: n, SampleTime: t0.Add(-time.Minute), Windows: stats(v)}
	}
	return snap
}

// A waiting pod goes back to the queue once a node that did not pass for it
// passes, and not while only nodes that already passed (turned away by
// another plugin) stay as they were.
func TestWaiterActivatesWhenANodeCools(t *testing.T) {
	tr := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry(), Now: (&fakeClock{t: t0}).now})
	h := &activator{}
	w := tr.NewWaiter("LoadAware", h, usage.Window5m, flat, under90)
	nodes := nodeInfos("a", "b", "c")
	est := loadmodel.Amount{MilliCPU: 400} // 10 % of 4 CPUs

	// c passes already (another plugin turned the pod away there).
	hot := cpuAt(map[string]float64{"a": 95, "b": 85, "c": 20})
	w.Wait(boundPod("p", ""), est, tr.Table(hot, nodes, usage.Window5m, flat))
	ctx := context.Background()

	steps := []struct {
		name string
		snap *usage.Snapshot
		want []string
	}{
		{name: "hotter, and c as it was", snap: cpuAt(map[string]float64{"a": 97, "b": 88, "c": 20})},
		{name: "b cools to 80: 80 + 10 passes", snap: cpuAt(map[string]float64{"a": 97, "b": 80, "c": 20}), want: []string{"p"}},
	}
	for _, s := range steps {
		w.wake(ctx, s.snap)
		if diff := cmp.Diff(s.want, h.pods()); diff != "" {
			t.Errorf("%s: activated (-want,+got):\n%s", s.name, diff)
		}
	}
	if w.Len() != 0 {
		t.Errorf("an activated pod still waits")
	}
}

// Pods that were placed or deleted stop waiting, whoever placed them.
func TestWaiterForgetsPlacedPods(t *testing.T) {
	tr := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry(), Now: (&fakeClock{t: t0}).now})
	w := tr.NewWaiter("LoadAware", &activator{}, usage.Window5m, flat, under90)
	table := tr.Table(cpuAt(map[string]float64{"a": 95}), nodeInfos("a"), usage.Window5m, flat)
	for _, p := range []string{"placed", "deleted", "waiting"} {
		w.Wait(boundPod(p, ""), loadmodel.Amount{MilliCPU: 400}, table)
	}
	tr.onPod(boundPod("placed", "a"))
	tr.onPodDelete(boundPod("deleted", ""))
	if w.Len() != 1 {
		t.Errorf("%d pods wait, want only the one neither placed nor deleted", w.Len())
	}
}

// The tracker hands each new snapshot of its source to its waiters.
func TestStartWakingFollowsTheSource(t *testing.T) {
	src := &swappable{}
	src.snap.Store(cpuAt(map[string]float64{"a": 95}))
	tr := NewTracker(src, Options{Registerer: prometheus.NewRegistry(), Now: (&fakeClock{t: t0}).now})
	h := &activator{}
	w := tr.NewWaiter("LoadAware", h, usage.Window5m, flat, under90)
	w.Wait(boundPod("p", ""), loadmodel.Amount{MilliCPU: 400}, tr.Table(src.Snapshot(), nodeInfos("a"), usage.Window5m, flat))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr.StartWaking(ctx)
	src.snap.Store(cpuAt(map[string]float64{"a": 50}))
	deadline := time.Now().Add(30 * WakePeriod)
	for len(h.pods()) == 0 && time.Now().Before(deadline) {
		time.Sleep(WakePeriod / 10)
	}
	if diff := cmp.Diff([]string{"p"}, h.pods()); diff != "" {
		t.Errorf("activated after the node cooled (-want,+got):\n%s", diff)
	}
}

// swappable is a usage source whose snapshot a test replaces.
type swappable struct {
	snap atomic.Pointer[usage.Snapshot]
}

func (s *swappable) Snapshot() *usage.Snapshot { return s.snap.Load() }
