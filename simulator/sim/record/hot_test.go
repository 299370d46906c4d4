package record

import (
	"testing"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

func TestHotTrackerCountsCyclesAndFewestEvictions(t *testing.T) {
	h := NewHotTracker(Thresholds{CPU: 85, Memory: 90}, map[usage.Resource]float64{usage.CPU: 80, usage.Memory: 85})
	node := func(name string, cpu, memory float64, pods ...model.Amount) NodeState {
		return NodeState{NodeStep: NodeStep{Node: name, CPU: cpu, Memory: memory}, pods: pods}
	}
	r := &Result{}
	// Memory 95 %: under 85 takes the 5-, 4- and 2-point pods, largest
	// first (95−5−4 = 86 is still over).
	h.Observe([]NodeState{
		node("a", 30, 95, model.Amount{Memory: 1}, model.Amount{Memory: 5}, model.Amount{Memory: 4}, model.Amount{Memory: 2}),
		node("b", 20, 40),
	}, r)
	if r.NeededEvictions != 3 || r.HotCycles != 1 {
		t.Errorf("needed %d, hot cycles %d; want 3 and 1", r.NeededEvictions, r.HotCycles)
	}
	// Still hot: the episode's need was counted once; a second cycle over
	// the scheduler's 90 %.
	h.Observe([]NodeState{node("a", 30, 91, model.Amount{Memory: 5})}, r)
	if r.NeededEvictions != 3 || r.HotCycles != 2 {
		t.Errorf("needed %d, hot cycles %d; want 3 and 2", r.NeededEvictions, r.HotCycles)
	}
	// Cool, then hot again: a new episode, and the run of cycles restarts.
	h.Observe([]NodeState{node("a", 30, 50)}, r)
	h.Observe([]NodeState{node("a", 30, 92, model.Amount{Memory: 10})}, r)
	if r.NeededEvictions != 4 || r.HotCycles != 2 {
		t.Errorf("needed %d, hot cycles %d; want 4 and 2", r.NeededEvictions, r.HotCycles)
	}
	// Over a high threshold that no eviction can fix: every pod counts as
	// needed, but the cycles do not: no descheduler can cool that node.
	for range 5 {
		h.Observe([]NodeState{node("c", 99, 10, model.Amount{CPU: 1}, model.Amount{CPU: 2})}, r)
	}
	if r.NeededEvictions != 6 || r.HotCycles != 2 {
		t.Errorf("needed %d, hot cycles %d; want 6 and 2", r.NeededEvictions, r.HotCycles)
	}
}
