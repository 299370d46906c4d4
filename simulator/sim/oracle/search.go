package oracle

import (
	"math"
)

// placement is how many pods of each workload (column) each node (row)
// holds.
type placement struct {
	p     *problem
	count [][]int
	// util and used are each node's utilisation and requests, kept as
	// counts change.
	util []float64
	used [][3]int64
}

func newPlacement(p *problem) *placement {
	pl := &placement{p: p, count: make([][]int, len(p.nodes)), util: make([]float64, len(p.nodes)), used: make([][3]int64, len(p.nodes))}
	for i, n := range p.nodes {
		pl.count[i] = make([]int, len(p.workloads))
		pl.util[i] = n.base
	}
	return pl
}

// canAdd reports whether one more pod of workload w fits on node i.
func (pl *placement) canAdd(i, w int) bool {
	n := pl.p.nodes[i]
	if n.adds[w] == nil || pl.count[i][w] >= len(n.adds[w]) {
		return false
	}
	for r, req := range pl.p.workloads[w].requests {
		if pl.used[i][r]+req > n.allocatable[r] {
			return false
		}
	}
	return true
}

func (pl *placement) add(i, w int) {
	pl.util[i] += pl.p.nodes[i].adds[w][pl.count[i][w]]
	pl.count[i][w]++
	for r, req := range pl.p.workloads[w].requests {
		pl.used[i][r] += req
	}
}

func (pl *placement) remove(i, w int) {
	pl.count[i][w]--
	pl.util[i] -= pl.p.nodes[i].adds[w][pl.count[i][w]]
	for r, req := range pl.p.workloads[w].requests {
		pl.used[i][r] -= req
	}
}

// score is what the search minimises: the spread first, then the sum of
// squared deviations from the mean, which tells apart placements of one
// spread and leads out of them.
type score struct{ spread, squares float64 }

func (a score) better(b score) bool {
	const eps = 1e-9
	if a.spread < b.spread-eps {
		return true
	}
	return a.spread <= b.spread+eps && a.squares < b.squares-eps
}

func (pl *placement) score() score {
	lo, hi, mean := math.Inf(1), math.Inf(-1), 0.0
	for _, u := range pl.util {
		lo, hi, mean = min(lo, u), max(hi, u), mean+u
	}
	mean /= float64(len(pl.util))
	var squares float64
	for _, u := range pl.util {
		squares += (u - mean) * (u - mean)
	}
	return score{spread: hi - lo, squares: squares}
}

// extremes are the nodes of the highest and the lowest utilisation, the
// first of each in node order.
func (pl *placement) extremes() (hi, lo int) {
	for i, u := range pl.util {
		if u > pl.util[hi] {
			hi = i
		}
		if u < pl.util[lo] {
			lo = i
		}
	}
	return hi, lo
}

// greedy places every pod, the workloads in order of their requests (the
// largest first), each pod on the node it leaves least utilised among those
// it fits; pods that fit nowhere are counted.
func greedy(p *problem) (*placement, int) {
	pl := newPlacement(p)
	order := make([]int, len(p.workloads))
	for i := range order {
		order[i] = i
	}
	weight := func(w int) float64 {
		r := p.workloads[w].requests
		return float64(r[0])/1000 + float64(r[1])/(1<<30)
	}
	// Stable on the workloads' name order: the same scenario, the same order.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && weight(order[j]) > weight(order[j-1]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	unplaced := 0
	for _, w := range order {
		for range p.workloads[w].replicas {
			best := -1
			for i := range p.nodes {
				if !pl.canAdd(i, w) {
					continue
				}
				after := pl.util[i] + p.nodes[i].adds[w][pl.count[i][w]]
				if best < 0 || after < pl.util[best]+p.nodes[best].adds[w][pl.count[best][w]] {
					best = i
				}
			}
			if best < 0 {
				unplaced++
				continue
			}
			pl.add(best, w)
		}
	}
	return pl, unplaced
}

// improve moves and swaps pods while that lowers the score: a pod off the
// most or onto the least utilised node, or a pod of one of them swapped
// with a pod of another workload elsewhere. It stops at a placement no
// such change improves, or after maxRounds.
func (pl *placement) improve(maxRounds int) {
	for range maxRounds {
		if !pl.step() {
			return
		}
	}
}

// step makes the best improving change and reports whether there was one.
func (pl *placement) step() bool {
	hi, lo := pl.extremes()
	best := pl.score()
	var apply func()
	try := func(change, undo func()) {
		change()
		if s := pl.score(); s.better(best) {
			best, apply = s, change
		}
		undo()
	}
	nw := len(pl.p.workloads)
	for _, from := range []int{hi, lo} {
		for i := range pl.p.nodes {
			if i == from {
				continue
			}
			for w := range nw {
				// Relocations: off the hottest node, onto the coolest.
				if from == hi && pl.count[hi][w] > 0 && pl.canAdd(i, w) {
					try(func() { pl.remove(hi, w); pl.add(i, w) }, func() { pl.remove(i, w); pl.add(hi, w) })
				}
				if from == lo && pl.count[i][w] > 0 && pl.canAdd(lo, w) {
					try(func() { pl.remove(i, w); pl.add(lo, w) }, func() { pl.remove(lo, w); pl.add(i, w) })
				}
				// Swaps: a pod of w on the extreme node for one of v on i.
				if pl.count[from][w] == 0 {
					continue
				}
				for v := range nw {
					if v == w || pl.count[i][v] == 0 || !pl.canSwap(from, w, i, v) {
						continue
					}
					try(func() { pl.remove(from, w); pl.remove(i, v); pl.add(from, v); pl.add(i, w) },
						func() { pl.remove(from, v); pl.remove(i, w); pl.add(from, w); pl.add(i, v) })
				}
			}
		}
	}
	if apply == nil {
		return false
	}
	apply()
	pl.recompute()
	return true
}

// recompute sums each node's utilisation afresh from its counts, so that
// the additions and subtractions of the search leave no rounding behind.
func (pl *placement) recompute() {
	for i, n := range pl.p.nodes {
		pl.util[i] = n.base
		for w, c := range pl.count[i] {
			for j := range c {
				pl.util[i] += n.adds[w][j]
			}
		}
	}
}

// canSwap reports whether a pod of w on a and a pod of v on b can trade
// places.
func (pl *placement) canSwap(a, w, b, v int) bool {
	na, nb := pl.p.nodes[a], pl.p.nodes[b]
	if na.adds[v] == nil || nb.adds[w] == nil || pl.count[a][v] >= len(na.adds[v]) || pl.count[b][w] >= len(nb.adds[w]) {
		return false
	}
	rw, rv := pl.p.workloads[w].requests, pl.p.workloads[v].requests
	for r := range rw {
		if pl.used[a][r]-rw[r]+rv[r] > na.allocatable[r] || pl.used[b][r]-rv[r]+rw[r] > nb.allocatable[r] {
			return false
		}
	}
	return true
}
