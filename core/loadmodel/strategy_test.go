package loadmodel

import (
	"math"
	"testing"

	"github.com/ballast-sched/ballast/core/usage"
)

func TestLeastLoaded(t *testing.T) {
	tests := []struct {
		name      string
		predicted float64
		want      float64
	}{
		{name: "idle", predicted: 0, want: 100},           // 100 − 0
		{name: "thirty percent", predicted: 30, want: 70}, // 100 − 30
		{name: "full", predicted: 100, want: 0},           // 100 − 100
		{name: "over full", predicted: 140, want: 0},      // clamped to 100
		{name: "negative", predicted: -5, want: 100},      // clamped to 0
		{name: "NaN", predicted: math.NaN(), want: 0},     // treated as full
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := LeastLoaded(tt.predicted); got != tt.want {
				t.Errorf("LeastLoaded(%v) = %v, want %v", tt.predicted, got, tt.want)
			}
		})
	}
}

func TestTargetPacking(t *testing.T) {
	tests := []struct {
		name      string
		target    float64
		predicted float64
		want      float64
	}{
		{name: "idle node scores the target", target: 70, predicted: 0, want: 70},         // 70 + 30×0/70
		{name: "half way to the target", target: 70, predicted: 35, want: 85},             // 70 + 30×35/70
		{name: "at the target", target: 70, predicted: 70, want: 100},                     // 70 + 30×70/70
		{name: "above the target", target: 70, predicted: 85, want: 35},                   // 70×(100−85)/30
		{name: "full", target: 70, predicted: 100, want: 0},                               // 70×0/30
		{name: "over full", target: 70, predicted: 101, want: 0},                          // beyond 100
		{name: "NaN", target: 70, predicted: math.NaN(), want: 0},                         // treated as full
		{name: "target zero behaves as least loaded", target: 0, predicted: 30, want: 70}, // 100 − 30
		{name: "target hundred packs", target: 100, predicted: 30, want: 30},              // u
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TargetPacking(tt.target)(tt.predicted); math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("TargetPacking(%v)(%v) = %v, want %v", tt.target, tt.predicted, got, tt.want)
			}
		})
	}
}

func TestCombinationScore(t *testing.T) {
	preds := []Prediction{
		{Resource: usage.CPU, Current: 20},    // LeastLoaded 80
		{Resource: usage.Memory, Current: 60}, // LeastLoaded 40
	}
	tests := []struct {
		name    string
		combine Combination
		weights []ResourceWeight
		want    int64
	}{
		{name: "mean, equal weights", combine: WeightedMean, weights: []ResourceWeight{{usage.CPU, 1}, {usage.Memory, 1}}, want: 60},       // (80+40)/2
		{name: "mean, memory weighs three", combine: WeightedMean, weights: []ResourceWeight{{usage.CPU, 1}, {usage.Memory, 3}}, want: 50}, // (80+120)/4
		{name: "mean, memory only", combine: WeightedMean, weights: []ResourceWeight{{usage.Memory, 1}}, want: 40},                         // 40/1
		{name: "mean, zero weight ignored", combine: WeightedMean, weights: []ResourceWeight{{usage.CPU, 0}, {usage.Memory, 2}}, want: 40}, // 80/2
		{name: "mean, no usable weight", combine: WeightedMean, weights: []ResourceWeight{{usage.CPU, 0}}, want: 0},
		{name: "bottleneck takes the worst resource", combine: Bottleneck, weights: []ResourceWeight{{usage.CPU, 1}, {usage.Memory, 1}}, want: 40},
		{name: "bottleneck ignores the weights' sizes", combine: Bottleneck, weights: []ResourceWeight{{usage.CPU, 5}, {usage.Memory, 1}}, want: 40},
		{name: "bottleneck over cpu only", combine: Bottleneck, weights: []ResourceWeight{{usage.CPU, 1}}, want: 80},
		{name: "bottleneck skips a zero weight", combine: Bottleneck, weights: []ResourceWeight{{usage.CPU, 1}, {usage.Memory, 0}}, want: 80},
		{name: "bottleneck, no usable weight", combine: Bottleneck, weights: []ResourceWeight{{usage.Memory, 0}}, want: 0},
		{name: "empty is the default", combine: "", weights: []ResourceWeight{{usage.CPU, 1}, {usage.Memory, 1}}, want: 40},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.combine.Score(preds, tt.weights, LeastLoaded); got != tt.want {
				t.Errorf("%q.Score() = %v, want %v", tt.combine, got, tt.want)
			}
		})
	}
}

// TestBottleneckPrefersTheBigCoolNode: a big node cool on both resources and
// a small one whose CPU is idle but whose memory is half taken. The mean
// calls them equal; the bottleneck prefers the big node.
func TestBottleneckPrefersTheBigCoolNode(t *testing.T) {
	equal := []ResourceWeight{{usage.CPU, 1}, {usage.Memory, 1}}
	big := []Prediction{{Resource: usage.CPU, Current: 25}, {Resource: usage.Memory, Current: 25}}
	small := []Prediction{{Resource: usage.CPU, Current: 0}, {Resource: usage.Memory, Current: 50}}
	if b, s := WeightedMean.Score(big, equal, LeastLoaded), WeightedMean.Score(small, equal, LeastLoaded); b != s {
		t.Fatalf("WeightedMean: big %d, small %d, want equal", b, s)
	}
	if b, s := Bottleneck.Score(big, equal, LeastLoaded), Bottleneck.Score(small, equal, LeastLoaded); b <= s {
		t.Errorf("Bottleneck: big %d, small %d, want the big node higher", b, s)
	}
}
