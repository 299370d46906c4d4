package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// randomScenarios draws n random homelabs, seeds first, first+1, …, with
// node counts in nodes ("MIN-MAX").
func randomScenarios(n int, first int64, nodes string, d time.Duration) ([]*scenario.Scenario, error) {
	lo, hi, ok := strings.Cut(nodes, "-")
	minN, err1 := strconv.Atoi(lo)
	maxN, err2 := strconv.Atoi(hi)
	if !ok || err1 != nil || err2 != nil {
		return nil, fmt.Errorf("-nodes %q: want MIN-MAX, e.g. 2-60", nodes)
	}
	out := make([]*scenario.Scenario, 0, n)
	for i := range int64(n) {
		sc, err := scenario.Random(first+i, scenario.RandomOptions{MinNodes: minN, MaxNodes: maxN, Duration: d})
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// saveScenarios writes each scenario to dir/NAME.yaml, dir made if need be.
func saveScenarios(dir string, scenarios []*scenario.Scenario) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-save: %w", err)
	}
	for _, sc := range scenarios {
		if err := scenario.Save(filepath.Join(dir, sc.Name+".yaml"), sc); err != nil {
			return fmt.Errorf("-save: %w", err)
		}
	}
	return nil
}

// Goals of random homelabs, the distribution's: the spread never worse than
// the default scheduler's, the median within medianOverOracle points of the
// best placement and the 90th percentile within p90OverOracle, and no loop.
const (
	medianOverOracle = 5.0
	p90OverOracle    = 10.0
)

// writeDistribution prints how Ballast did over random homelabs — the
// spread over the best placement and over the default scheduler's,
// evictions, loops — with the seeds of the worst, and reports whether the
// distribution meets its goals.
func writeDistribution(out io.Writer, results []*record.Comparison) bool {
	return distribution(out, results).met()
}

// spreads is what writeDistribution reports of random homelabs and judges.
type spreads struct {
	// median and p90 are Ballast's spread over the best placement's;
	// worse counts the runs worse than the default scheduler's.
	median, p90  float64
	worse, loops int
}

// guaranteed reports whether no run is worse than the default scheduler's
// and none loops: what every homelab must get, however few are drawn.
func (d spreads) guaranteed() bool { return d.worse == 0 && d.loops == 0 }

// met reports whether the distribution meets every goal.
func (d spreads) met() bool {
	return d.guaranteed() && d.median <= medianOverOracle && d.p90 <= p90OverOracle
}

// distribution prints the distribution writeDistribution describes and
// returns its figures.
func distribution(out io.Writer, results []*record.Comparison) spreads {
	var over, ratio, evictions []float64
	worse, loops := 0, 0
	type run struct {
		name string
		over float64
	}
	var runs []run
	for _, c := range results {
		o := c.Ballast.Summary.Spread - c.Oracle.Spread
		over = append(over, o)
		ratio = append(ratio, c.SpreadRatio())
		evictions = append(evictions, float64(c.Ballast.Evictions))
		if c.Ballast.Summary.Spread > c.Default.Summary.Spread+0.05 {
			worse++
		}
		loops += c.Ballast.Loops
		runs = append(runs, run{c.Scenario, o})
	}
	fmt.Fprintf(out, "\nRANDOM HOMELABS: %d\n", len(results))
	fmt.Fprintf(out, "  Ballast's spread over the best placement (points): median %.1f, 90th percentile %.1f, worst %.1f\n",
		quantile(over, 0.5), quantile(over, 0.9), quantile(over, 1))
	fmt.Fprintf(out, "  over the default scheduler's spread: median %.2f×, 90th percentile %.2f×\n", quantile(ratio, 0.5), quantile(ratio, 0.9))
	fmt.Fprintf(out, "  evictions per run: median %.0f, 90th percentile %.0f; loops in all runs: %d; runs worse than the default: %d\n",
		quantile(evictions, 0.5), quantile(evictions, 0.9), loops, worse)
	slices.SortFunc(runs, func(a, b run) int {
		switch {
		case a.over > b.over:
			return -1
		case a.over < b.over:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	fmt.Fprint(out, "  the worst, to look at (bench-balance -random 1 -seed SEED):")
	for _, r := range runs[:min(5, len(runs))] {
		fmt.Fprintf(out, " %s (%+.1f)", r.name, r.over)
	}
	fmt.Fprintln(out)
	d := spreads{median: quantile(over, 0.5), p90: quantile(over, 0.9), worse: worse, loops: loops}
	fmt.Fprintf(out, "  goals (never worse than the default, no loop, median ≤ %.0f and 90th percentile ≤ %.0f points over the best): %s\n",
		medianOverOracle, p90OverOracle, yesNo(d.met()))
	return d
}

// quantile is the q-th quantile of xs (nearest rank); 0 for none.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	i := int(q*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
