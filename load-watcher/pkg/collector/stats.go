package collector

import (
	"math"
	"slices"

	"github.com/ballast-sched/ballast/core/usage"
)

// summarize computes the statistics of values, given oldest first. It sorts
// scratch (a copy of values) for the percentile and returns it for reuse.
//
//	avg    arithmetic mean
//	std    population standard deviation, sqrt(Σ(x−avg)²/n)
//	p95    nearest rank: the ⌈0.95·n⌉-th smallest value
//	latest the last value
func summarize(values, scratch []float64) (usage.Stats, []float64) {
	n := len(values)
	if n == 0 {
		return usage.Stats{}, scratch
	}
	sum, maxV := 0.0, values[0]
	for _, v := range values {
		sum += v
		if v > maxV { // values hold no NaN; math.Max's NaN handling is slow
			maxV = v
		}
	}
	avg := sum / float64(n)
	sq := 0.0
	for _, v := range values {
		d := v - avg
		sq += d * d
	}
	scratch = append(scratch[:0], values...)
	slices.Sort(scratch)
	rank := (95*n + 99) / 100 // ⌈0.95·n⌉ in integers, free of rounding
	return usage.Stats{
		Avg:     avg,
		Std:     math.Sqrt(sq / float64(n)),
		Max:     maxV,
		P95:     scratch[rank-1],
		Latest:  values[n-1],
		Samples: n,
	}, scratch
}
