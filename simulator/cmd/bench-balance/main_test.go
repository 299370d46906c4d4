package main

import (
	"testing"

	"github.com/ballast-sched/ballast/simulator/sim/record"

	"github.com/google/go-cmp/cmp"
)

func TestMedianRoundPicksTheMiddleRatio(t *testing.T) {
	run := func(def, bal float64) *record.Comparison {
		return &record.Comparison{
			Default: &record.Result{Summary: record.Summary{Spread: def}},
			Ballast: &record.Result{Summary: record.Summary{Spread: bal}},
		}
	}
	runs := []*record.Comparison{run(40, 24), run(40, 12), run(40, 18)} // 0.60, 0.30, 0.45
	got, ratios := medianRound(runs)
	if got != runs[2] {
		t.Errorf("median round has ratio %.2f, want 0.45", got.SpreadRatio())
	}
	if diff := cmp.Diff([]float64{0.6, 0.3, 0.45}, ratios); diff != "" {
		t.Errorf("ratios (-want,+got):\n%s", diff)
	}
	if got, _ := medianRound(runs[:2]); got != runs[1] {
		t.Errorf("of two rounds, want the lower one")
	}
	if got := formatRatios([]float64{0.6, 0.3}); got != "0.60 0.30" {
		t.Errorf("formatRatios = %q", got)
	}
}
