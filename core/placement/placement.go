// Package placement searches for the placement of a cluster's pods that
// spreads its nodes' utilisation most evenly: how many pods of each workload
// each node holds, each pod's requests fitting its node's allocatable, each
// workload on the nodes it may go to. Two parts of Ballast ask the same
// question of different numbers: the simulator's oracle, with every pod's
// future usage known, to measure schedulers against; and the descheduler's
// planner, with the usage measured now, to know where the cluster could be
// and which moves get it there.
//
// A node's utilisation is a vector (one number per dimension the caller
// scores: the oracle one combined utilisation, the planner CPU and memory);
// the search minimises the sum over dimensions of the spread (the highest
// node's minus the lowest's), then the sum of squared deviations from the
// mean, which tells apart placements of one spread and leads out of them.
// It is a local search: from a start (Greedy's, or the cluster's own
// placement), it moves one pod or swaps two while that lowers the score,
// each time trying the pods of the most and the least utilised nodes of
// every dimension.
//
// It is written here rather than taken from a solver library: the problem
// is an integer program with a min-max objective over thousands of
// variables, which gonum's simplex (the oracle's bound) relaxes but cannot
// solve in whole pods, and no maintained Go library does local search over
// placements with Kubernetes' request fitting.
package placement

import (
	"math"
)

// Problem is a cluster's nodes and workloads as numbers.
type Problem struct {
	// Dims is how many utilisation dimensions a node has.
	Dims int
	// Weights are each dimension's weight in the score; nil weighs each
	// 1. A dimension of weight 0 is not scored, only held under Limit.
	Weights   []float64
	Workloads []Workload
	Nodes     []Node
}

// weight is dimension d's weight in the score.
func (p *Problem) weight(d int) float64 {
	if p.Weights == nil {
		return 1
	}
	return p.Weights[d]
}

// Workload is a set of interchangeable pods.
type Workload struct {
	Name string
	// Requests are one pod's millicores, bytes and pod count.
	Requests [3]int64
}

// Node is one node of the problem.
type Node struct {
	Name string
	// Base is the node's utilisation without the problem's pods, per
	// dimension.
	Base []float64
	// Allocatable is millicores, bytes and pods; Used what pods outside
	// the problem request of it.
	Allocatable, Used [3]int64
	// Adds holds, per workload, the utilisation the node's first, second,
	// … pod of it adds (one vector of Dims per pod): the most pods of it
	// the node may hold is its length, and nil is a node the workload may
	// not go to.
	Adds [][][]float64
	// Limit, when not nil, is the utilisation per dimension a pod may not
	// take the node over by arriving (what the pods already there make of
	// it is not judged).
	Limit []float64
	// Fixed, when not nil, holds per workload the pods that may not leave
	// the node.
	Fixed []int
}

// Placement is how many pods of each workload each node holds.
type Placement struct {
	p *Problem
	// Count holds, per node and workload, the pods placed.
	Count [][]int
	// util and used are each node's utilisation and requests, kept as
	// counts change.
	util [][]float64
	used [][3]int64
}

// New returns the placement of no pod.
func New(p *Problem) *Placement {
	pl := &Placement{p: p, Count: make([][]int, len(p.Nodes)), util: make([][]float64, len(p.Nodes)), used: make([][3]int64, len(p.Nodes))}
	for i, n := range p.Nodes {
		pl.Count[i] = make([]int, len(p.Workloads))
		pl.util[i] = make([]float64, p.Dims)
		copy(pl.util[i], n.Base)
		pl.used[i] = n.Used
	}
	return pl
}

// FromCounts returns the placement of counts (per node, per workload), as
// it is: a cluster's placement may break what the search keeps (a node
// over its limit, more pods than Adds has values for, where the pods can
// no longer go); the pods beyond Adds add its last value, or nothing.
func FromCounts(p *Problem, counts [][]int) *Placement {
	pl := New(p)
	for i := range p.Nodes {
		for w, c := range counts[i] {
			for range c {
				pl.Add(i, w)
			}
		}
	}
	return pl
}

// Clone returns a copy of pl that changes independently.
func (pl *Placement) Clone() *Placement {
	out := &Placement{p: pl.p, Count: make([][]int, len(pl.Count)), util: make([][]float64, len(pl.util)), used: append([][3]int64(nil), pl.used...)}
	for i := range pl.Count {
		out.Count[i] = append([]int(nil), pl.Count[i]...)
		out.util[i] = append([]float64(nil), pl.util[i]...)
	}
	return out
}

// Util is node i's utilisation, per dimension; it must not be changed.
func (pl *Placement) Util(i int) []float64 { return pl.util[i] }

// add is what the next pod of w adds to node i.
func (pl *Placement) addOf(i, w, k int) []float64 {
	adds := pl.p.Nodes[i].Adds
	if w >= len(adds) || len(adds[w]) == 0 {
		return nil
	}
	return adds[w][min(k, len(adds[w])-1)]
}

// CanAdd reports whether one more pod of workload w may go to node i: w
// may go there, the node holds fewer of it than Adds allows, its requests
// fit, and the node stays under its Limit with it.
func (pl *Placement) CanAdd(i, w int) bool {
	n := pl.p.Nodes[i]
	if w >= len(n.Adds) || n.Adds[w] == nil || pl.Count[i][w] >= len(n.Adds[w]) {
		return false
	}
	for r, req := range pl.p.Workloads[w].Requests {
		if pl.used[i][r]+req > n.Allocatable[r] {
			return false
		}
	}
	if n.Limit != nil {
		add := n.Adds[w][pl.Count[i][w]]
		for d, v := range add {
			if v > 0 && pl.util[i][d]+v > n.Limit[d] {
				return false
			}
		}
	}
	return true
}

// CanRemove reports whether a pod of w may leave node i: it holds more of
// them than its Fixed.
func (pl *Placement) CanRemove(i, w int) bool {
	fixed := 0
	if f := pl.p.Nodes[i].Fixed; f != nil {
		fixed = f[w]
	}
	return pl.Count[i][w] > fixed
}

// Add places one more pod of w on node i, unchecked.
func (pl *Placement) Add(i, w int) {
	for d, v := range pl.addOf(i, w, pl.Count[i][w]) {
		pl.util[i][d] += v
	}
	pl.Count[i][w]++
	for r, req := range pl.p.Workloads[w].Requests {
		pl.used[i][r] += req
	}
}

// Remove takes one pod of w off node i.
func (pl *Placement) Remove(i, w int) {
	pl.Count[i][w]--
	for d, v := range pl.addOf(i, w, pl.Count[i][w]) {
		pl.util[i][d] -= v
	}
	for r, req := range pl.p.Workloads[w].Requests {
		pl.used[i][r] -= req
	}
}

// Score is what the search minimises: the spread first, then the sum of
// squared deviations from the mean.
type Score struct {
	// Spread is the sum over dimensions, weighted, of the highest node's
	// utilisation minus the lowest's.
	Spread float64
	// Squares is the sum over dimensions, weighted, and nodes of the
	// squared deviation from the dimension's mean.
	Squares float64
}

// Better reports whether a is lower than b beyond rounding.
func (a Score) Better(b Score) bool {
	const eps = 1e-9
	if a.Spread < b.Spread-eps {
		return true
	}
	return a.Spread <= b.Spread+eps && a.Squares < b.Squares-eps*max(1, math.Abs(b.Squares))
}

// Score scores pl.
func (pl *Placement) Score() Score {
	var out Score
	for d := range pl.p.Dims {
		w := pl.p.weight(d)
		if w == 0 || len(pl.util) == 0 {
			continue
		}
		lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
		for _, u := range pl.util {
			lo, hi, mean = min(lo, u[d]), max(hi, u[d]), mean+u[d]
		}
		mean /= float64(len(pl.util))
		out.Spread += w * (hi - lo)
		for _, u := range pl.util {
			out.Squares += w * (u[d] - mean) * (u[d] - mean)
		}
	}
	return out
}

// SpreadOf is the spread of dimension d alone.
func (pl *Placement) SpreadOf(d int) float64 {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, u := range pl.util {
		lo, hi = min(lo, u[d]), max(hi, u[d])
	}
	if len(pl.util) == 0 {
		return 0
	}
	return hi - lo
}

// Recompute sums each node's utilisation afresh from its counts, so that
// the additions and subtractions of a search leave no rounding behind.
func (pl *Placement) Recompute() {
	for i, n := range pl.p.Nodes {
		copy(pl.util[i], n.Base)
		for w, c := range pl.Count[i] {
			for k := range c {
				for d, v := range pl.addOf(i, w, k) {
					pl.util[i][d] += v
				}
			}
		}
	}
}
