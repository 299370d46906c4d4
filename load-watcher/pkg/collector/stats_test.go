package collector

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/ballast-sched/ballast/core/usage"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name   string
		values []float64 // oldest first
		want   usage.Stats
	}{
		{
			name:   "no samples",
			values: nil,
			want:   usage.Stats{},
		},
		{
			// One sample: it is the mean, the max, the p95 and the latest; no spread.
			name:   "one sample",
			values: []float64{42},
			want:   usage.Stats{Avg: 42, Std: 0, Max: 42, P95: 42, Latest: 42, Samples: 1},
		},
		{
			// avg = 100/4 = 25; deviations ∓15, ∓5 → (225+25+25+225)/4 = 125;
			// std = √125 ≈ 11.1803; p95 rank ⌈0.95·4⌉ = 4 → 40.
			name:   "rising",
			values: []float64{10, 20, 30, 40},
			want:   usage.Stats{Avg: 25, Std: 11.180339887498949, Max: 40, P95: 40, Latest: 40, Samples: 4},
		},
		{
			// The textbook set: avg 40/8 = 5, Σ(x−5)² = 32, 32/8 = 4, std 2;
			// p95 rank ⌈7.6⌉ = 8 → 9.
			name:   "textbook population std",
			values: []float64{2, 4, 4, 4, 5, 5, 7, 9},
			want:   usage.Stats{Avg: 5, Std: 2, Max: 9, P95: 9, Latest: 9, Samples: 8},
		},
		{
			// Latest is the last value (30), not the largest (50).
			// avg 90/3 = 30; (400+400+0)/3 = 266.67; std ≈ 16.3299; p95 rank ⌈2.85⌉ = 3 → 50.
			name:   "latest is not max",
			values: []float64{50, 10, 30},
			want:   usage.Stats{Avg: 30, Std: 16.32993161855452, Max: 50, P95: 50, Latest: 30, Samples: 3},
		},
		{
			// 1..20: avg 10.5; population variance (20²−1)/12 = 33.25, std ≈ 5.7663;
			// p95 rank ⌈0.95·20⌉ = 19 exactly → 19 (not the max).
			name:   "p95 below max",
			values: seq(1, 20),
			want:   usage.Stats{Avg: 10.5, Std: 5.766281297335398, Max: 20, P95: 19, Latest: 20, Samples: 20},
		},
		{
			// 1..21: p95 rank ⌈19.95⌉ = 20 → 20; variance (21²−1)/12 = 36.67, std ≈ 6.0553.
			name:   "p95 rank rounds up",
			values: seq(1, 21),
			want:   usage.Stats{Avg: 11, Std: 6.0553007081949835, Max: 21, P95: 20, Latest: 21, Samples: 21},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _ := summarize(tt.values, nil)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("summarize(%v) (-want,+got):\n%s", tt.values, diff)
			}
		})
	}
}

func seq(from, to int) []float64 {
	var out []float64
	for i := from; i <= to; i++ {
		out = append(out, float64(i))
	}
	return out
}
