package loadmodel

import (
	"math"
	"testing"
)

func TestRisk(t *testing.T) {
	tests := []struct {
		name        string
		in          RiskInput
		margin      float64
		sensitivity float64
		want        float64
	}{
		// mu = (40+10)/100 = 0.5; sigma = 1 × 0.2^(1/1) = 0.2; risk = 0.7/2
		{name: "margin 1 sensitivity 1", in: RiskInput{Avg: 40, Std: 20, Added: 10}, margin: 1, sensitivity: 1, want: 0.35},
		// mu = 0.5; sigma = 2 × 0.2 = 0.4; risk = 0.9/2
		{name: "margin doubles variation", in: RiskInput{Avg: 50, Std: 20}, margin: 2, sensitivity: 1, want: 0.45},
		// mu = 0.5; sigma = 0.16^(1/2) = 0.4; risk = 0.9/2
		{name: "sensitivity two takes the square root", in: RiskInput{Avg: 50, Std: 16}, margin: 1, sensitivity: 2, want: 0.45},
		// mu = min(1.3, 1) = 1; sigma = 3 × 0.5 = 1.5 → 1; risk = 1
		{name: "clamped at one", in: RiskInput{Avg: 120, Std: 50, Added: 10}, margin: 3, sensitivity: 1, want: 1},
		// negative values count as zero
		{name: "negative input", in: RiskInput{Avg: -10, Std: -5}, margin: 1, sensitivity: 1, want: 0},
		{name: "NaN input is full risk", in: RiskInput{Avg: math.NaN()}, margin: 1, sensitivity: 1, want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Risk(tt.in, tt.margin, tt.sensitivity); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("Risk() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRiskScore(t *testing.T) {
	for _, tt := range []struct{ risk, want float64 }{
		{risk: 0.35, want: 65}, // 100 × 0.65
		{risk: 0, want: 100},
		{risk: 1, want: 0},
		{risk: 2, want: 0}, // clamped
		{risk: math.NaN(), want: 0},
	} {
		if got := RiskScore(tt.risk); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("RiskScore(%v) = %v, want %v", tt.risk, got, tt.want)
		}
	}
}
