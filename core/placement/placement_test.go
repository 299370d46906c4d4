package placement

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// uniform returns adds of n pods each adding v per dimension.
func uniform(n int, v ...float64) [][]float64 {
	out := make([][]float64, n)
	for k := range out {
		out[k] = v
	}
	return out
}

func TestGreedyAndImprove(t *testing.T) {
	// Two nodes alike, four pods alike: two on each.
	p := &Problem{Dims: 1, Workloads: []Workload{{Name: "web", Requests: [3]int64{100, 0, 1}}}}
	for _, name := range []string{"a", "b"} {
		p.Nodes = append(p.Nodes, Node{Name: name, Base: []float64{0}, Allocatable: [3]int64{4000, 1 << 30, 110},
			Adds: [][][]float64{uniform(4, 10)}})
	}
	pl, unplaced := Greedy(p, []int{4})
	pl.Improve(100)
	if unplaced != 0 || pl.Count[0][0] != 2 || pl.Count[1][0] != 2 || pl.Score().Spread != 0 {
		t.Errorf("want two pods on each node, got %v (unplaced %d, score %+v)", pl.Count, unplaced, pl.Score())
	}

	// The cluster's own placement, all four on a, improves to two on each.
	pl = FromCounts(p, [][]int{{4}, {0}})
	if got := pl.Score().Spread; got != 40 {
		t.Fatalf("spread of 4 pods on one node: %v, want 40", got)
	}
	if n := pl.Improve(100); n != 2 || pl.Count[0][0] != 2 {
		t.Errorf("want two moves to two pods on each node, got %d moves to %v", n, pl.Count)
	}
}

func TestRequestsAndLimitsHold(t *testing.T) {
	// b's requests take one pod only, c's limit none: the spread stays.
	p := &Problem{Dims: 2, Workloads: []Workload{{Name: "w", Requests: [3]int64{1000, 0, 1}}}, Nodes: []Node{
		{Name: "a", Base: []float64{0, 0}, Allocatable: [3]int64{8000, 0, 110}, Adds: [][][]float64{uniform(8, 10, 5)}},
		{Name: "b", Base: []float64{0, 0}, Allocatable: [3]int64{1000, 0, 110}, Adds: [][][]float64{uniform(8, 10, 5)}},
		{Name: "c", Base: []float64{50, 0}, Allocatable: [3]int64{8000, 0, 110}, Adds: [][][]float64{uniform(8, 10, 5)}, Limit: []float64{55, 100}},
	}}
	pl := FromCounts(p, [][]int{{6}, {0}, {0}})
	pl.Improve(100)
	if pl.Count[1][0] != 1 || pl.Count[2][0] != 0 || pl.Count[0][0] != 5 {
		t.Errorf("want 5 on a, 1 on b (requests), none on c (limit): %v", pl.Count)
	}
}

// randomProblem draws a small problem: a few nodes and workloads, some
// workloads kept off some nodes, some nodes with limits, pods that add
// different amounts by their rank on a node.
func randomProblem(rng *rand.Rand, dims int) (*Problem, []int) {
	p := &Problem{Dims: dims}
	if dims > 1 && rng.IntN(2) == 0 {
		// Some dimensions only held under limits, or weighed less.
		p.Weights = make([]float64, dims)
		for d := range dims {
			p.Weights[d] = float64(rng.IntN(3)) / 2
		}
		p.Weights[0] = 1
	}
	nw, nn := 1+rng.IntN(4), 2+rng.IntN(5)
	replicas := make([]int, nw)
	for w := range nw {
		p.Workloads = append(p.Workloads, Workload{Requests: [3]int64{int64(rng.IntN(1000)), int64(rng.IntN(1 << 20)), 1}})
		replicas[w] = 1 + rng.IntN(6)
	}
	for range nn {
		n := Node{Base: make([]float64, dims), Allocatable: [3]int64{int64(1000 + rng.IntN(8000)), int64(1<<20 + rng.IntN(8<<20)), int64(2 + rng.IntN(10))},
			Adds: make([][][]float64, nw)}
		for d := range dims {
			n.Base[d] = rng.Float64() * 40
		}
		if rng.IntN(3) == 0 {
			n.Limit = make([]float64, dims)
			for d := range dims {
				n.Limit[d] = 40 + rng.Float64()*60
			}
		}
		for w := range nw {
			if rng.IntN(5) == 0 {
				continue
			}
			n.Adds[w] = make([][]float64, 1+rng.IntN(replicas[w]))
			for k := range n.Adds[w] {
				n.Adds[w][k] = make([]float64, dims)
				for d := range dims {
					n.Adds[w][k][d] = rng.Float64() * 15
				}
			}
		}
		p.Nodes = append(p.Nodes, n)
	}
	return p, replicas
}

// TestScorerAgreesWithScore holds the step's scoring, which looks at the
// two changed nodes only, to the score computed afresh, for every change
// a step may try on random placements.
func TestScorerAgreesWithScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		dims := 1 + rng.IntN(3)
		p, replicas := randomProblem(rng, dims)
		pl, _ := Greedy(p, replicas)
		s := pl.newScorer()
		if b, want := s.base(), pl.Score(); !close(b, want) {
			t.Fatalf("base %+v, Score %+v", b, want)
		}
		for a := range p.Nodes {
			for b := range p.Nodes {
				for w := range p.Workloads {
					if a == b || pl.Count[a][w] == 0 || !pl.CanAdd(b, w) {
						continue
					}
					c := Change{Workload: w, From: a, To: b, Back: -1}
					oldA, oldB := s.save(a, b)
					pl.Apply(c)
					got, want := s.changed(a, b, oldA, oldB), pl.Score()
					pl.undo(c)
					s.restore(a, b, oldA, oldB)
					if !close(got, want) {
						t.Fatalf("change %+v: scorer %+v, Score %+v", c, got, want)
					}
				}
			}
		}
	}
}

func close(a, b Score) bool {
	return math.Abs(a.Spread-b.Spread) < 1e-9 && math.Abs(a.Squares-b.Squares) < 1e-6*max(1, b.Squares)
}

// TestImproveKeepsTheRules: on random problems, a search from the greedy
// start keeps every pod, never makes the score worse, and leaves every
// node within its requests, its Adds and its limit.
func TestImproveKeepsTheRules(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 300 {
		p, replicas := randomProblem(rng, 1+rng.IntN(3))
		pl, _ := Greedy(p, replicas)
		placed := totals(pl)
		start := pl.Score()
		pl.Improve(1000)
		if start.Better(pl.Score()) {
			t.Fatalf("Improve made the score worse: %+v → %+v", start, pl.Score())
		}
		if got := totals(pl); !slices.Equal(got, placed) {
			t.Fatalf("pods per workload %v, placed %v at the start", got, placed)
		}
		for i, n := range p.Nodes {
			var used [3]int64
			for w, c := range pl.Count[i] {
				if c > 0 && (n.Adds[w] == nil || c > len(n.Adds[w])) {
					t.Fatalf("node %d holds %d pods of %d, Adds allow %d", i, c, w, len(n.Adds[w]))
				}
				for r := range used {
					used[r] += int64(c) * p.Workloads[w].Requests[r]
				}
			}
			for r := range used {
				if used[r] > n.Allocatable[r] {
					t.Fatalf("node %d requests %v over %v", i, used, n.Allocatable)
				}
			}
			for d, v := range pl.Util(i) {
				if n.Limit != nil && v > n.Limit[d]+1e-9 {
					t.Fatalf("node %d over its limit on %d: %v > %v", i, d, v, n.Limit[d])
				}
			}
		}
	}
}

// totals counts each workload's pods.
func totals(pl *Placement) []int {
	out := make([]int, len(pl.p.Workloads))
	for i := range pl.Count {
		for w, c := range pl.Count[i] {
			out[w] += c
		}
	}
	return out
}

// TestImproveFindsTheOptimumOfSmallProblems holds the search, from the
// greedy start, to the best placement of tiny problems found by trying
// them all, within the slack a local search may leave: it must never be
// above the optimum by more than the largest pod's addition.
func TestImproveFindsTheOptimumOfSmallProblems(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	exact, compared := 0, 0
	for range 400 {
		p, replicas := randomProblem(rng, 1)
		pl, unplaced := Greedy(p, replicas)
		if unplaced > 0 {
			continue
		}
		pl.Improve(1000)
		best, ok := bruteForce(p, replicas)
		if !ok {
			continue
		}
		compared++
		got := pl.Score().Spread
		var largest float64
		for _, n := range p.Nodes {
			for _, adds := range n.Adds {
				for _, a := range adds {
					largest = max(largest, a[0])
				}
			}
		}
		if got < best-1e-9 {
			t.Fatalf("search %v below the optimum %v: the brute force is wrong", got, best)
		}
		if got > best+largest+1e-9 {
			t.Errorf("search %v, optimum %v: more than the largest pod (%v) above", got, best, largest)
		}
		if got <= best+1e-9 {
			exact++
		}
	}
	// The search finds the optimum of most tiny problems.
	t.Logf("optimum found in %d of %d", exact, compared)
	if compared < 100 || exact < compared*3/4 {
		t.Errorf("the search found the optimum of %d of %d problems", exact, compared)
	}
}

// bruteForce tries every placement of the pods (up to a size), with the
// search's rules, and returns the lowest spread.
func bruteForce(p *Problem, replicas []int) (float64, bool) {
	total := 0
	for _, r := range replicas {
		total += r
	}
	if math.Pow(float64(len(p.Nodes)), float64(total)) > 200_000 {
		return 0, false
	}
	pl := New(p)
	best, found := math.Inf(1), false
	var place func(w, left int)
	place = func(w, left int) {
		if w == len(replicas) {
			best, found = min(best, pl.Score().Spread), true
			return
		}
		if left == 0 {
			next := 0
			if w+1 < len(replicas) {
				next = replicas[w+1]
			}
			place(w+1, next)
			return
		}
		for i := range p.Nodes {
			if pl.CanAdd(i, w) {
				pl.Add(i, w)
				place(w, left-1)
				pl.Remove(i, w)
			}
		}
	}
	place(0, replicas[0])
	return best, found
}

// TestFixedPodsStay: pods Fixed to their node never leave it, however much
// moving them would lower the score.
func TestFixedPodsStay(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		p, replicas := randomProblem(rng, 1+rng.IntN(2))
		start, _ := Greedy(p, replicas)
		for i := range p.Nodes {
			p.Nodes[i].Fixed = make([]int, len(p.Workloads))
			for w, c := range start.Count[i] {
				if c > 0 {
					p.Nodes[i].Fixed[w] = rng.IntN(c + 1)
				}
			}
		}
		pl := FromCounts(p, start.Count)
		pl.Improve(1000)
		for i, n := range p.Nodes {
			for w, f := range n.Fixed {
				if pl.Count[i][w] < f {
					t.Fatalf("node %d holds %d pods of %d, %d of them fixed", i, pl.Count[i][w], w, f)
				}
			}
		}
	}
	// Two nodes, all four pods on a, three of them fixed: one moves.
	p := &Problem{Dims: 1, Workloads: []Workload{{Name: "w"}}, Nodes: []Node{
		{Name: "a", Base: []float64{0}, Allocatable: [3]int64{0, 0, 10}, Adds: [][][]float64{uniform(4, 10)}, Fixed: []int{3}},
		{Name: "b", Base: []float64{0}, Allocatable: [3]int64{0, 0, 10}, Adds: [][][]float64{uniform(4, 10)}},
	}}
	pl := FromCounts(p, [][]int{{4}, {0}})
	if pl.Improve(10); pl.Count[0][0] != 3 || pl.Count[1][0] != 1 {
		t.Errorf("want 3 on a (fixed) and 1 on b, got %v", pl.Count)
	}
}
