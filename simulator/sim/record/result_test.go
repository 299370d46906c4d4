package record

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		util    map[string]float64
		spread  float64
		cv      float64
		hottest string
	}{
		// mean 40, deviations -20, 0, +20: variance 800/3, std 16.33, cv 0.408.
		{"three nodes", map[string]float64{"a": 20, "b": 40, "c": 60}, 40, math.Sqrt(800.0/3) / 40, "c"},
		{"balanced", map[string]float64{"a": 50, "b": 50}, 0, 0, "a"},
		{"idle", map[string]float64{"a": 0}, 0, 0, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.util)
			if math.Abs(s.Spread-tc.spread) > 1e-9 || math.Abs(s.CV-tc.cv) > 1e-9 || s.Hottest != tc.hottest {
				t.Errorf("summarize = spread %v cv %v hottest %q, want %v %v %q", s.Spread, s.CV, s.Hottest, tc.spread, tc.cv, tc.hottest)
			}
		})
	}
}

func TestRunSummaryUsesTheLastQuarter(t *testing.T) {
	r := &Result{Thresholds: Thresholds{CPU: 85, Memory: 90}}
	// Four steps; only the last counts: a at 80% (cpu 100, mem 60), b at 20%.
	for i := range 4 {
		cpu := 10.0
		if i == 3 {
			cpu = 100
		}
		r.Steps = append(r.Steps, Step{Nodes: []NodeStep{{Node: "a", CPU: cpu, Memory: 60}, {Node: "b", CPU: 20, Memory: 20}}})
	}
	r.Summarize()
	if r.Summary.Spread != 60 || r.Summary.Hottest != "a" || r.Summary.OverThreshold != 1 {
		t.Errorf("summary = %+v, want spread 60, hottest a, 1 node over threshold", r.Summary)
	}
}
