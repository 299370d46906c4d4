package sim

import (
	"testing"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

func TestHotTrackerCountsCyclesAndFewestEvictions(t *testing.T) {
	h := newHotTracker(map[usage.Resource]float64{usage.CPU: 80, usage.Memory: 85})
	node := func(name string, cpu, memory float64, pods ...Amount) nodeState {
		return nodeState{NodeStep: NodeStep{Node: name, CPU: cpu, Memory: memory}, pods: pods}
	}
	r := &Result{}
	// Memory 95 %: under 85 takes the 5-, 4- and 2-point pods, largest
	// first (95−5−4 = 86 is still over).
	h.observe([]nodeState{
		node("a", 30, 95, Amount{Memory: 1}, Amount{Memory: 5}, Amount{Memory: 4}, Amount{Memory: 2}),
		node("b", 20, 40),
	}, r)
	if r.NeededEvictions != 3 || r.HotCycles != 1 {
		t.Errorf("needed %d, hot cycles %d; want 3 and 1", r.NeededEvictions, r.HotCycles)
	}
	// Still hot: the episode's need was counted once; a second cycle over
	// the scheduler's 90 %.
	h.observe([]nodeState{node("a", 30, 91, Amount{Memory: 5})}, r)
	if r.NeededEvictions != 3 || r.HotCycles != 2 {
		t.Errorf("needed %d, hot cycles %d; want 3 and 2", r.NeededEvictions, r.HotCycles)
	}
	// Cool, then hot again: a new episode, and the run of cycles restarts.
	h.observe([]nodeState{node("a", 30, 50)}, r)
	h.observe([]nodeState{node("a", 30, 92, Amount{Memory: 10})}, r)
	if r.NeededEvictions != 4 || r.HotCycles != 2 {
		t.Errorf("needed %d, hot cycles %d; want 4 and 2", r.NeededEvictions, r.HotCycles)
	}
	// Over a high threshold that no eviction can fix: every pod counts as
	// needed, but the cycles do not: no descheduler can cool that node.
	for range 5 {
		h.observe([]nodeState{node("c", 99, 10, Amount{CPU: 1}, Amount{CPU: 2})}, r)
	}
	if r.NeededEvictions != 6 || r.HotCycles != 2 {
		t.Errorf("needed %d, hot cycles %d; want 6 and 2", r.NeededEvictions, r.HotCycles)
	}
}
