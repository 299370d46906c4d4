package report

import (
	"testing"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/oracle"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

func TestTarget(t *testing.T) {
	result := func(spread float64, loops, onHog int, final ...record.NodeStep) *record.Result {
		return &record.Result{Loops: loops, PingPong: loops, PlacedOnHog: onHog, Summary: record.Summary{Spread: spread, Final: final}}
	}
	withHot := func(r *record.Result, cycles, hotEvictions, needed int) *record.Result {
		r.HotCycles, r.HotEvictions, r.NeededEvictions = cycles, hotEvictions, needed
		return r
	}
	evicted := func(r *record.Result, n int) *record.Result {
		r.Evictions = n
		return r
	}
	zero := int32(0)
	half := &scenario.Target{SpreadRatio: 0.5, HotCycles: 3}
	hog := &scenario.Target{NoPodsOnHog: true, HotCycles: 3}
	even := &scenario.Target{EvenReplicas: true, HotCycles: 3}
	for _, tc := range []struct {
		name string
		c    *record.Comparison
		met  bool
	}{
		{"half the spread", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(20, 0, 0)}, true},
		{"not half", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(21, 0, 0)}, false},
		{"a loop fails any target", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(10, 1, 0)}, false},
		// A move undone after the cluster changed is reported, not failed.
		{"a re-move after a change", &record.Comparison{Target: half, Default: result(40, 0, 0),
			Ballast: &record.Result{PingPong: 1, ReMoves: 1, Summary: record.Summary{Spread: 10}}}, true},
		{"pod on the hog", &record.Comparison{Target: hog, Default: result(1, 0, 5), Ballast: result(1, 0, 1)}, false},
		{"hog avoided", &record.Comparison{Target: hog, Default: result(1, 0, 5), Ballast: result(1, 0, 0)}, true},
		// The peer's 15 is the best spread; Ballast's 20 is above it.
		{"peer balanced better", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(20, 0, 0), Peer: result(15, 0, 0)}, false},
		{"peer balanced worse", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: result(20, 0, 0), Peer: result(25, 0, 0)}, true},
		// Both move pods: 20 points for 4 evictions (0.2 a point) against
		// the peer's 15 for 6 (0.4), or for 2 (0.13).
		{"fewer evictions per point than the peer", &record.Comparison{Target: half, Default: result(40, 0, 0),
			Ballast: evicted(result(20, 0, 0), 4), Peer: evicted(result(25, 0, 0), 6)}, true},
		{"more evictions per point than the peer", &record.Comparison{Target: half, Default: result(40, 0, 0),
			Ballast: evicted(result(20, 0, 0), 4), Peer: evicted(result(25, 0, 0), 2)}, false},
		// The peer moved pods and removed nothing: any balance bought is cheaper.
		{"the peer removed nothing", &record.Comparison{Target: half, Default: result(40, 0, 0),
			Ballast: evicted(result(20, 0, 0), 9), Peer: evicted(result(41, 0, 0), 1)}, true},
		// The peer evicted nothing: nothing to compare.
		{"the peer moved nothing", &record.Comparison{Target: half, Default: result(40, 0, 0),
			Ballast: evicted(result(20, 0, 0), 9), Peer: result(30, 0, 0)}, true},
		{"3/3", &record.Comparison{Target: even, Default: result(1, 0, 0), Ballast: result(0, 0, 0,
			record.NodeStep{Node: "a", Workloads: map[string]int{"web": 3}}, record.NodeStep{Node: "b", Workloads: map[string]int{"web": 3}})}, true},
		// b has none of web: 4 against 0.
		{"4/0", &record.Comparison{Target: even, Default: result(1, 0, 0), Ballast: result(0, 0, 0,
			record.NodeStep{Node: "a", Workloads: map[string]int{"web": 4}}, record.NodeStep{Node: "b"})}, false},
		{"hot for 3 cycles", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: withHot(result(10, 0, 0), 3, 6, 4)}, true},
		{"hot for 4 cycles", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: withHot(result(10, 0, 0), 4, 6, 4)}, false},
		{"too many evictions for the need", &record.Comparison{Target: half, Default: result(40, 0, 0), Ballast: withHot(result(10, 0, 0), 1, 7, 4)}, false},
		{"an eviction where none may be", &record.Comparison{Target: &scenario.Target{MaxEvictions: &zero, HotCycles: 3},
			Default: result(40, 0, 0), Ballast: &record.Result{Evictions: 1}}, false},
		{"no target: spread below default", &record.Comparison{Default: result(40, 0, 0), Ballast: result(39, 0, 0)}, true},
		{"a leak reported where none is", &record.Comparison{Target: half, Default: result(40, 0, 0),
			Ballast: &record.Result{Growing: map[string]float64{"web": 2}, Summary: record.Summary{Spread: 10}}}, false},
		{"the leak reported", &record.Comparison{Target: &scenario.Target{SpreadRatio: 0.5, HotCycles: 3, Growing: []string{"cache"}}, Default: result(40, 0, 0),
			Ballast: &record.Result{Growing: map[string]float64{"cache": 30}, Summary: record.Summary{Spread: 10}}}, true},
		{"the leak missed", &record.Comparison{Target: &scenario.Target{SpreadRatio: 0.5, HotCycles: 3, Growing: []string{"cache"}}, Default: result(40, 0, 0),
			Ballast: result(10, 0, 0)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, met := Target(tc.c); met != tc.met {
				t.Errorf("Target met = %v, want %v", met, tc.met)
			}
		})
	}
}

func TestFinalPlacement(t *testing.T) {
	r := &record.Result{Summary: record.Summary{Final: []record.NodeStep{
		{Node: "a", Workloads: map[string]int{"web": 2, "db": 1}}, {Node: "b", Workloads: map[string]int{"web": 1}},
	}}}
	if got, want := FinalPlacement(r), "db: a 1; web: a 2, b 1"; got != want {
		t.Errorf("FinalPlacement = %q, want %q", got, want)
	}
}

func TestTargetAgainstTheOracle(t *testing.T) {
	target := &scenario.Target{SpreadOverOracle: 10, HotCycles: 3}
	result := func(spread float64) *record.Result { return &record.Result{Summary: record.Summary{Spread: spread}} }
	for _, tc := range []struct {
		name   string
		oracle *oracle.Result
		spread float64
		met    bool
	}{
		// 4.5 + 10 = 14.5.
		{name: "within ten points", oracle: &oracle.Result{Spread: 4.5}, spread: 14.5, met: true},
		{name: "beyond", oracle: &oracle.Result{Spread: 4.5}, spread: 14.6, met: false},
		// Without an oracle the target states nothing about the spread.
		{name: "no oracle", spread: 40, met: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &record.Comparison{Target: target, Default: result(50), Ballast: result(tc.spread), Oracle: tc.oracle}
			want, met := Target(c)
			if met != tc.met {
				t.Errorf("Target = %q, %v; want met %v", want, met, tc.met)
			}
		})
	}
}
