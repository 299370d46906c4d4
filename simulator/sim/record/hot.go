package record

import (
	"slices"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// HotTracker follows nodes over thresholds from one descheduling cycle to
// the next: how many cycles in a row a node starts over a scheduler
// threshold (counted only while moving its pods could fix that), and, when a node first goes over the descheduler's high
// thresholds, how few evictions would bring it back under them.
type HotTracker struct {
	// scheduler are the scheduler's thresholds.
	scheduler Thresholds
	// high are the descheduler's high thresholds in percent; none when the
	// policy has no LoadAwareBalance.
	high map[usage.Resource]float64
	// overScheduler counts, per node, the cycles in a row it started over a
	// scheduler threshold.
	overScheduler map[string]int
	// overHigh holds the nodes over a high threshold at the previous cycle.
	overHigh map[string]bool
}

// NewHotTracker follows nodes against the scheduler's thresholds and the
// descheduler's high ones.
func NewHotTracker(scheduler Thresholds, high map[usage.Resource]float64) *HotTracker {
	return &HotTracker{scheduler: scheduler, high: high, overScheduler: map[string]int{}, overHigh: map[string]bool{}}
}

// Observe records the nodes at the start of a cycle into r.
func (h *HotTracker) Observe(nodes []NodeState, r *Result) {
	hot := map[string]bool{}
	for _, n := range nodes {
		if h.scheduler.Over(n.CPU, n.Memory) && h.fixable(n) {
			h.overScheduler[n.Node]++
			r.HotCycles = max(r.HotCycles, h.overScheduler[n.Node])
		} else {
			delete(h.overScheduler, n.Node)
		}
		if h.excess(n.CPU, n.Memory) <= 0 {
			continue
		}
		hot[n.Node] = true
		if !h.overHigh[n.Node] {
			r.NeededEvictions += h.fewestEvictions(n)
		}
	}
	h.overHigh = hot
}

// fixable reports whether moving the node's scenario pods away could bring
// it under the scheduler thresholds: a node filled by a process outside
// Kubernetes alone is beyond any descheduler.
func (h *HotTracker) fixable(n NodeState) bool {
	cpu, memory := n.CPU, n.Memory
	for _, p := range n.pods {
		cpu, memory = cpu-p.CPU, memory-p.Memory
	}
	return !h.scheduler.Over(cpu, memory)
}

// excess is how far usage is over the high thresholds, in points of the
// resource furthest over; zero or less when under every one.
func (h *HotTracker) excess(cpu, memory float64) float64 {
	out := -1.0
	if t, ok := h.high[usage.CPU]; ok {
		out = max(out, cpu-t)
	}
	if t, ok := h.high[usage.Memory]; ok {
		out = max(out, memory-t)
	}
	return out
}

// fewestEvictions is how many of the node's pods must go, largest first by
// the resources over their threshold, for its usage to fall under every
// high threshold; all of them when that is not enough.
func (h *HotTracker) fewestEvictions(n NodeState) int {
	pods := slices.Clone(n.pods)
	overCPU := n.CPU > h.high[usage.CPU] && h.high[usage.CPU] > 0
	overMemory := n.Memory > h.high[usage.Memory] && h.high[usage.Memory] > 0
	weight := func(a model.Amount) float64 {
		var w float64
		if overCPU {
			w += a.CPU
		}
		if overMemory {
			w += a.Memory
		}
		return w
	}
	slices.SortStableFunc(pods, func(a, b model.Amount) int {
		switch wa, wb := weight(a), weight(b); {
		case wa > wb:
			return -1
		case wa < wb:
			return 1
		}
		return 0
	})
	cpu, memory := n.CPU, n.Memory
	for i, p := range pods {
		if h.excess(cpu, memory) <= 0 {
			return i
		}
		cpu, memory = cpu-p.CPU, memory-p.Memory
	}
	return len(pods)
}
