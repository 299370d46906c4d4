package placement

import (
	"cmp"
	"math"
	"slices"
)

// Greedy places replicas[w] pods of each workload w on no pod (Fill).
func Greedy(p *Problem, replicas []int) (*Placement, int) {
	pl := New(p)
	return pl, pl.Fill(replicas)
}

// Fill places replicas[w] more pods of each workload w, the workloads in
// order of their requests (the largest first), each pod on the node it
// leaves least utilised (summed over dimensions, weighted) among those it
// may go to; it returns the pods that fit nowhere.
func (pl *Placement) Fill(replicas []int) int {
	p := pl.p
	order := make([]int, len(p.Workloads))
	for i := range order {
		order[i] = i
	}
	weight := func(w int) float64 {
		r := p.Workloads[w].Requests
		return float64(r[0])/1000 + float64(r[1])/(1<<30)
	}
	// Stable on the workloads' order: the same problem, the same placement.
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(weight(b), weight(a)) })
	after := func(i, w int) float64 {
		var s float64
		add := pl.addOf(i, w, pl.Count[i][w])
		for d := range p.Dims {
			s += p.weight(d) * (pl.util[i][d] + add[d])
		}
		return s
	}
	unplaced := 0
	for _, w := range order {
		for range replicas[w] {
			best, bestAfter := -1, 0.0
			for i := range p.Nodes {
				if !pl.CanAdd(i, w) {
					continue
				}
				if a := after(i, w); best < 0 || a < bestAfter {
					best, bestAfter = i, a
				}
			}
			if best < 0 {
				unplaced++
				continue
			}
			pl.Add(best, w)
		}
	}
	return unplaced
}

// Improve moves and swaps pods while that lowers the score (Step), at most
// maxRounds times, and returns how many changes it made.
func (pl *Placement) Improve(maxRounds int) int {
	for r := range maxRounds {
		if !pl.Step() {
			return r
		}
	}
	return maxRounds
}

// Change is one change of a step: a pod of Workload from node From to node
// To, and for a swap a pod of Back from To to From.
type Change struct {
	Workload, From, To int
	// Back is the swapped workload, or -1 for a relocation.
	Back int
}

// Step makes the change that lowers the score most, among the moves of a
// pod off a dimension's most utilised node or onto its least utilised one
// and the swaps of a pod of either with a pod of another workload
// elsewhere, and reports whether there was one. Pods Fixed to their node
// stay.
func (pl *Placement) Step() bool {
	c, ok := pl.bestChange()
	if !ok {
		return false
	}
	pl.Apply(c)
	pl.Recompute()
	return true
}

// Apply makes change c.
func (pl *Placement) Apply(c Change) {
	pl.Remove(c.From, c.Workload)
	if c.Back >= 0 {
		pl.Remove(c.To, c.Back)
		pl.Add(c.From, c.Back)
	}
	pl.Add(c.To, c.Workload)
}

// bestChange returns the change Step would make, and whether there is one
// that lowers the score.
func (pl *Placement) bestChange() (Change, bool) {
	s := pl.newScorer()
	best := s.base()
	var found Change
	ok := false
	try := func(c Change) {
		oldA, oldB := s.save(c.From, c.To)
		pl.Apply(c)
		if sc := s.changed(c.From, c.To, oldA, oldB); sc.Better(best) {
			best, found, ok = sc, c, true
		}
		pl.undo(c)
		s.restore(c.From, c.To, oldA, oldB)
	}
	can := pl.CanRemove
	nw := len(pl.p.Workloads)
	for _, e := range s.extremes() {
		from := e.node
		for i := range pl.p.Nodes {
			if i == from {
				continue
			}
			for w := range nw {
				// Relocations: off the most utilised node, onto the least.
				if e.hi && can(from, w) && pl.CanAdd(i, w) {
					try(Change{Workload: w, From: from, To: i, Back: -1})
				}
				if !e.hi && can(i, w) && pl.CanAdd(from, w) {
					try(Change{Workload: w, From: i, To: from, Back: -1})
				}
				// Swaps: a pod of w on the extreme node for one of v on i.
				if !can(from, w) {
					continue
				}
				for v := range nw {
					if v == w || !can(i, v) || !pl.canSwap(from, w, i, v) {
						continue
					}
					try(Change{Workload: w, From: from, To: i, Back: v})
				}
			}
		}
	}
	return found, ok
}

// undo takes change c back: the same pods, the other way.
func (pl *Placement) undo(c Change) {
	pl.Apply(Change{Workload: c.Workload, From: c.To, To: c.From, Back: c.Back})
}

// canSwap reports whether a pod of w on a and a pod of v on b can trade
// places.
func (pl *Placement) canSwap(a, w, b, v int) bool {
	na, nb := pl.p.Nodes[a], pl.p.Nodes[b]
	if v >= len(na.Adds) || w >= len(nb.Adds) || na.Adds[v] == nil || nb.Adds[w] == nil ||
		pl.Count[a][v] >= len(na.Adds[v]) || pl.Count[b][w] >= len(nb.Adds[w]) {
		return false
	}
	rw, rv := pl.p.Workloads[w].Requests, pl.p.Workloads[v].Requests
	for r := range rw {
		if pl.used[a][r]-rw[r]+rv[r] > na.Allocatable[r] || pl.used[b][r]-rv[r]+rw[r] > nb.Allocatable[r] {
			return false
		}
	}
	return pl.staysUnder(a, w, v) && pl.staysUnder(b, v, w)
}

// staysUnder reports whether node i, trading a pod of out for one of in,
// stays under its Limit on every dimension the trade raises.
func (pl *Placement) staysUnder(i, out, in int) bool {
	n := pl.p.Nodes[i]
	if n.Limit == nil {
		return true
	}
	add := pl.addOf(i, in, pl.Count[i][in])
	sub := pl.addOf(i, out, pl.Count[i][out]-1)
	for d := range pl.p.Dims {
		delta := add[d]
		if sub != nil {
			delta -= sub[d]
		}
		if delta > 0 && pl.util[i][d]+delta > n.Limit[d] {
			return false
		}
	}
	return true
}

// scorer scores the placements a step tries, each of which changes two
// nodes, in time independent of the number of nodes: it keeps, per
// dimension, the sum and the sum of squares of the nodes' utilisation and
// the three highest and lowest nodes.
type scorer struct {
	pl         *Placement
	sum, sumSq []float64
	top, bot   [][3]int
	// scratch holds the two changed nodes' utilisation before a try.
	scratch [2][]float64
}

func (pl *Placement) newScorer() *scorer {
	dims := pl.p.Dims
	s := &scorer{pl: pl, sum: make([]float64, dims), sumSq: make([]float64, dims), top: make([][3]int, dims), bot: make([][3]int, dims),
		scratch: [2][]float64{make([]float64, dims), make([]float64, dims)}}
	for d := range dims {
		s.top[d], s.bot[d] = [3]int{-1, -1, -1}, [3]int{-1, -1, -1}
		for i, u := range pl.util {
			s.sum[d] += u[d]
			s.sumSq[d] += u[d] * u[d]
			insert(&s.top[d], i, func(j int) bool { return u[d] > pl.util[j][d] })
			insert(&s.bot[d], i, func(j int) bool { return u[d] < pl.util[j][d] })
		}
	}
	return s
}

// insert puts i into the ordered three of list before the first entry
// before(j) says it beats, or at the first free place.
func insert(list *[3]int, i int, before func(j int) bool) {
	for k := range list {
		if list[k] < 0 || before(list[k]) {
			copy(list[k+1:], list[k:2])
			list[k] = i
			return
		}
	}
}

// extreme is a node of a dimension's highest (hi) or lowest utilisation.
type extreme struct {
	node int
	hi   bool
}

// extremes are each dimension's highest and lowest node (the first of
// each in node order), each once.
func (s *scorer) extremes() []extreme {
	var out []extreme
	for d := range s.pl.p.Dims {
		if s.pl.p.weight(d) == 0 {
			continue
		}
		hi, lo := 0, 0
		for i, u := range s.pl.util {
			if u[d] > s.pl.util[hi][d] {
				hi = i
			}
			if u[d] < s.pl.util[lo][d] {
				lo = i
			}
		}
		for _, e := range []extreme{{hi, true}, {lo, false}} {
			if len(s.pl.util) > 0 && !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

func (s *scorer) save(a, b int) ([]float64, []float64) {
	copy(s.scratch[0], s.pl.util[a])
	copy(s.scratch[1], s.pl.util[b])
	return s.scratch[0], s.scratch[1]
}

// restore puts back the two nodes' utilisation as save found it: the
// additions and subtractions of a try and its undo may leave rounding.
func (s *scorer) restore(a, b int, oldA, oldB []float64) {
	copy(s.pl.util[a], oldA)
	copy(s.pl.util[b], oldB)
}

// base is the placement's score as the tries' are computed.
func (s *scorer) base() Score {
	var out Score
	n := float64(len(s.pl.util))
	if n == 0 {
		return out
	}
	for d := range s.pl.p.Dims {
		w := s.pl.p.weight(d)
		if w == 0 {
			continue
		}
		out.Spread += w * (s.pl.util[s.top[d][0]][d] - s.pl.util[s.bot[d][0]][d])
		out.Squares += w * max(s.sumSq[d]-s.sum[d]*s.sum[d]/n, 0)
	}
	return out
}

// changed is the score once nodes a and b, at oldA and oldB before, have
// changed.
func (s *scorer) changed(a, b int, oldA, oldB []float64) Score {
	var out Score
	n := float64(len(s.pl.util))
	ua, ub := s.pl.util[a], s.pl.util[b]
	for d := range s.pl.p.Dims {
		w := s.pl.p.weight(d)
		if w == 0 {
			continue
		}
		hi, lo := math.Max(ua[d], ub[d]), math.Min(ua[d], ub[d])
		for _, j := range s.top[d] {
			if j >= 0 && j != a && j != b {
				hi = math.Max(hi, s.pl.util[j][d])
				break
			}
		}
		for _, j := range s.bot[d] {
			if j >= 0 && j != a && j != b {
				lo = math.Min(lo, s.pl.util[j][d])
				break
			}
		}
		sum := s.sum[d] - oldA[d] - oldB[d] + ua[d] + ub[d]
		sumSq := s.sumSq[d] - oldA[d]*oldA[d] - oldB[d]*oldB[d] + ua[d]*ua[d] + ub[d]*ub[d]
		out.Spread += w * (hi - lo)
		out.Squares += w * max(sumSq-sum*sum/n, 0)
	}
	return out
}
