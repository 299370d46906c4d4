package oracle

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// class is a set of nodes alike for the relaxation: the same base, size,
// and workloads that may go there.
type class struct {
	nodes    int
	base     float64
	hostable bool
	// allocatable of one node; least and most per workload: the smallest
	// and the largest utilisation one pod of it adds on any of the nodes
	// (nil where it may not go).
	allocatable [3]int64
	least, most []float64
}

// classes groups the nodes alike.
func (p *problem) classes() []*class {
	var out []*class
	for _, n := range p.nodes {
		var c *class
		for _, k := range out {
			if k.hostable == n.hostable && k.allocatable == n.allocatable && math.Abs(k.base-n.base) < 1e-9 &&
				slices.EqualFunc(k.least, n.adds, func(l float64, adds []float64) bool { return (l < 0) == (len(adds) == 0) }) {
				c = k
				break
			}
		}
		if c == nil {
			c = &class{base: n.base, hostable: n.hostable, allocatable: n.allocatable,
				least: make([]float64, len(p.workloads)), most: make([]float64, len(p.workloads))}
			for w, adds := range n.adds {
				if len(adds) == 0 {
					c.least[w], c.most[w] = -1, -1
				} else {
					c.least[w], c.most[w] = math.Inf(1), math.Inf(-1)
				}
			}
			out = append(out, c)
		}
		c.nodes++
		for w, adds := range n.adds {
			if len(adds) > 0 {
				c.least[w], c.most[w] = min(c.least[w], slices.Min(adds)), max(c.most[w], slices.Max(adds))
			}
		}
	}
	return out
}

// bound solves a linear relaxation of the placement problem: X[w][c] ≥ 0
// pods of workload w on the nodes of class c, not necessarily whole, every
// workload's replicas placed, the requests of a class's pods within its
// nodes' allocatable, and each pod of w adding between the least and the
// most any pod of w adds on one of the class's nodes. The most utilised
// node of a class is at least the class's mean and the least utilised at
// most that mean, so with hi over every class's least mean and lo under
// every class's greatest one, hi − lo is at most the spread of any whole
// placement: the relaxation's optimum is a lower bound. In standard form
// (A·v = b, v ≥ 0), one slack per inequality, k nodes in class c:
//
//	Σc X[w][c]                          = replicas[w]        per workload
//	hi − Σw least[w][c]·X[w][c]/k − s   = base[c]            per class
//	lo − Σw most[w][c]·X[w][c]/k  + s'  = base[c]            per class
//	Σw requests[w][r]·X[w][c]/k   + s'' = allocatable[c][r]   per class and resource that can bind
//
// Grouping alike nodes keeps the problem small (a 50-node fleet has a
// handful of kinds of nodes) and gonum's dense simplex well conditioned.
func (p *problem) bound() (float64, error) {
	classes := p.classes()
	type variable struct{ w, c int }
	var xs []variable
	for ci, c := range classes {
		for w := range p.workloads {
			if c.least[w] >= 0 && p.workloads[w].replicas > 0 {
				xs = append(xs, variable{w, ci})
			}
		}
	}
	var placed []int
	for w, wl := range p.workloads {
		if wl.replicas == 0 {
			continue
		}
		if !slices.ContainsFunc(xs, func(v variable) bool { return v.w == w }) {
			return 0, fmt.Errorf("workload %s fits on no node", wl.name)
		}
		placed = append(placed, w)
	}
	type capacity struct{ c, r int }
	var caps []capacity
	for ci, c := range classes {
		for r := range 3 {
			var most int64
			for _, v := range xs {
				if v.c == ci {
					most += int64(p.workloads[v.w].replicas) * p.workloads[v.w].requests[r]
				}
			}
			if most > int64(c.nodes)*c.allocatable[r] {
				caps = append(caps, capacity{ci, r})
			}
		}
	}

	hi, lo := len(xs), len(xs)+1
	slack := len(xs) + 2
	rows := len(placed) + 2*len(classes) + len(caps)
	cols := slack + 2*len(classes) + len(caps)
	a := mat.NewDense(rows, cols, nil)
	b := make([]float64, rows)
	row := 0
	for _, w := range placed {
		for j, v := range xs {
			if v.w == w {
				a.Set(row, j, 1)
			}
		}
		b[row] = float64(p.workloads[w].replicas)
		row++
	}
	for ci, c := range classes {
		a.Set(row, hi, 1)
		a.Set(row+1, lo, 1)
		for j, v := range xs {
			if v.c == ci {
				a.Set(row, j, -c.least[v.w]/float64(c.nodes))
				a.Set(row+1, j, -c.most[v.w]/float64(c.nodes))
			}
		}
		a.Set(row, slack, -1)
		a.Set(row+1, slack+1, 1)
		b[row], b[row+1] = c.base, c.base
		row, slack = row+2, slack+2
	}
	for _, k := range caps {
		c := classes[k.c]
		// In units of the resource's allocatable, so that bytes and
		// millicores weigh like the other rows.
		for j, v := range xs {
			if v.c == k.c {
				a.Set(row, j, float64(p.workloads[v.w].requests[k.r])/float64(c.allocatable[k.r])/float64(c.nodes))
			}
		}
		a.Set(row, slack, 1)
		b[row] = 1
		row, slack = row+1, slack+1
	}
	cost := make([]float64, cols)
	cost[hi], cost[lo] = 1, -1
	opt, _, err := lp.Simplex(cost, a, b, 1e-10, nil)
	if err != nil {
		return 0, fmt.Errorf("solving the relaxation: %w", err)
	}
	return max(opt, 0), nil
}
