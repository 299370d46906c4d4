// Package oracle finds how evenly a scenario's pods could be spread at best,
// to measure schedulers against: the spread (the measure of a run's
// Summary.Spread: the highest node utilisation minus the lowest, averaged
// over the last quarter of the run) of the best placement an offline
// optimiser finds knowing every pod's real usage in advance, and a lower
// bound that no placement beats.
//
// The oracle places the pods once for the whole measurement window, as a
// scheduler with perfect knowledge and free moves would at its start: the
// replicas each workload has at the window's end, on the nodes that are in
// the cluster and schedulable when the window starts, each pod's requests
// fitting the node's allocatable with the others' (cpu, memory, pod count),
// each workload on the nodes its nodeSelector accepts. Utilisation is
// computed from the simulator's own usage model, pod by pod, step by step,
// with the same noise a run sees; a node that joins during the window counts
// for the steps it is there, with nothing placed on it.
//
// The bound is the optimum of the linear relaxation of that problem (pods
// may be split between nodes, each pod's usage ranges between the least and
// the most any of a workload's pods uses on the node over the window),
// solved with gonum's simplex. The gap between the two says how close to
// optimal the placement found is. What the static window leaves out (moving
// pods within the window to follow a usage spike) is beyond a descheduler
// too, whose every move restarts a pod.
package oracle

import (
	"fmt"
	"time"

	"github.com/ballast-sched/ballast/core/placement"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// maxRounds bounds the search's improvements; it ends much sooner on every
// scenario (a round moves one pod or swaps two).
const maxRounds = 100_000

// Result is the best placement found for a scenario's measurement window.
type Result struct {
	// From and To are the measurement window, in scenario time.
	From time.Duration `json:"fromNanoseconds"`
	To   time.Duration `json:"toNanoseconds"`
	// Spread is the placement's utilisation spread: the highest node's
	// window-averaged utilisation minus the lowest's, in points, as a
	// run's Summary.Spread.
	Spread float64 `json:"spread"`
	// Bound is the relaxation's spread, below which no placement goes;
	// nil when it could not be solved (Error says why).
	Bound *float64 `json:"bound,omitempty"`
	// BoundError says why there is no bound.
	BoundError string `json:"boundError,omitempty"`
	// Placement is the pods of each workload on each node.
	Placement map[string]map[string]int `json:"placement"`
	// Unplaced counts the pods that fit on no node.
	Unplaced int `json:"unplaced,omitempty"`
}

// Gap is how far the placement found may be from the best there is, in
// points; -1 without a bound.
func (r *Result) Gap() float64 {
	if r.Bound == nil {
		return -1
	}
	return r.Spread - *r.Bound
}

// Solve finds the best placement it can for sc's measurement window and the
// bound no placement beats.
func Solve(sc *scenario.Scenario) (*Result, error) {
	p, err := newProblem(sc)
	if err != nil {
		return nil, err
	}
	if len(p.nodes) == 0 {
		return nil, fmt.Errorf("scenario %s has no node", sc.Name)
	}
	sp := p.search()
	replicas := make([]int, len(p.workloads))
	for w, wl := range p.workloads {
		replicas[w] = wl.replicas
	}
	pl, unplaced := placement.Greedy(sp, replicas)
	pl.Improve(maxRounds)
	out := &Result{From: p.window[0], To: p.window[1], Spread: pl.Score().Spread, Unplaced: unplaced,
		Placement: map[string]map[string]int{}}
	for i, n := range p.nodes {
		for w, c := range pl.Count[i] {
			if c == 0 {
				continue
			}
			if out.Placement[n.name] == nil {
				out.Placement[n.name] = map[string]int{}
			}
			out.Placement[n.name][p.workloads[w].name] = c
		}
	}
	if unplaced > 0 {
		out.BoundError = fmt.Sprintf("%d pods fit on no node", unplaced)
		return out, nil
	}
	bound, err := p.bound()
	if err != nil {
		out.BoundError = err.Error()
		return out, nil
	}
	// The search may already be optimal: the bound is never above it.
	bound = min(bound, out.Spread)
	out.Bound = &bound
	return out, nil
}
