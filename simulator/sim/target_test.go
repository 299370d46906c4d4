package sim

import (
	"testing"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

func TestTarget(t *testing.T) {
	result := func(spread float64, pingPong, onHog int, final ...NodeStep) *Result {
		return &Result{PingPong: pingPong, PlacedOnHog: onHog, Summary: Summary{Spread: spread, Final: final}}
	}
	withHot := func(r *Result, cycles, hotEvictions, needed int) *Result {
		r.HotCycles, r.HotEvictions, r.NeededEvictions = cycles, hotEvictions, needed
		return r
	}
	zero := int32(0)
	half := &scenario.Target{SpreadRatio: 0.5, HotCycles: 3}
	hog := &scenario.Target{NoPodsOnHog: true, HotCycles: 3}
	even := &scenario.Target{EvenReplicas: true, HotCycles: 3}
	for _, tc := range []struct {
		name string
		c    *Comparison
		met  bool
	}{
		{"half the spread", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(20, 0, 0)}, true},
		{"not half", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(21, 0, 0)}, false},
		{"ping-pong fails any target", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(10, 1, 0)}, false},
		{"pod on the hog", &Comparison{Target: hog, Default: result(1, 0, 5), Ballast: result(1, 0, 1)}, false},
		{"hog avoided", &Comparison{Target: hog, Default: result(1, 0, 5), Ballast: result(1, 0, 0)}, true},
		// The peer's 15 is the best spread; Ballast's 20 is above it.
		{"peer balanced better", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(20, 0, 0), Peer: result(15, 0, 0)}, false},
		{"peer balanced worse", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(20, 0, 0), Peer: result(25, 0, 0)}, true},
		{"3/3", &Comparison{Target: even, Default: result(1, 0, 0), Ballast: result(0, 0, 0,
			NodeStep{Node: "a", Workloads: map[string]int{"web": 3}}, NodeStep{Node: "b", Workloads: map[string]int{"web": 3}})}, true},
		// b has none of web: 4 against 0.
		{"4/0", &Comparison{Target: even, Default: result(1, 0, 0), Ballast: result(0, 0, 0,
			NodeStep{Node: "a", Workloads: map[string]int{"web": 4}}, NodeStep{Node: "b"})}, false},
		{"hot for 3 cycles", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: withHot(result(10, 0, 0), 3, 6, 4)}, true},
		{"hot for 4 cycles", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: withHot(result(10, 0, 0), 4, 6, 4)}, false},
		{"too many evictions for the need", &Comparison{Target: half, Default: result(40, 0, 0), Ballast: withHot(result(10, 0, 0), 1, 7, 4)}, false},
		{"an eviction where none may be", &Comparison{Target: &scenario.Target{MaxEvictions: &zero, HotCycles: 3},
			Default: result(40, 0, 0), Ballast: &Result{Evictions: 1}}, false},
		{"no target: spread below default", &Comparison{Default: result(40, 0, 0), Ballast: result(39, 0, 0)}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, met := Target(tc.c); met != tc.met {
				t.Errorf("Target met = %v, want %v", met, tc.met)
			}
		})
	}
}

func TestFinalPlacement(t *testing.T) {
	r := &Result{Summary: Summary{Final: []NodeStep{
		{Node: "a", Workloads: map[string]int{"web": 2, "db": 1}}, {Node: "b", Workloads: map[string]int{"web": 1}},
	}}}
	if got, want := FinalPlacement(r), "db: a 1; web: a 2, b 1"; got != want {
		t.Errorf("FinalPlacement = %q, want %q", got, want)
	}
}

func TestBestPeer(t *testing.T) {
	spread := func(v float64) *Result { return &Result{Summary: Summary{Spread: v}} }
	for _, tc := range []struct {
		name            string
		c               *Comparison
		best, bestRatio float64
	}{
		{"no peer run", &Comparison{Default: spread(40), Ballast: spread(10)}, 40, 0.25},
		// min(40, 20) = 20; 10 / 20.
		{"peer better than default", &Comparison{Default: spread(40), Peer: spread(20), Ballast: spread(10)}, 20, 0.5},
		{"peer worse than default", &Comparison{Default: spread(40), Peer: spread(50), Ballast: spread(10)}, 40, 0.25},
		{"best spread zero", &Comparison{Default: spread(40), Peer: spread(0), Ballast: spread(10)}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.BestPeerSpread(); got != tc.best {
				t.Errorf("BestPeerSpread() = %g, want %g", got, tc.best)
			}
			if got := tc.c.BestPeerRatio(); got != tc.bestRatio {
				t.Errorf("BestPeerRatio() = %g, want %g", got, tc.bestRatio)
			}
		})
	}
}
