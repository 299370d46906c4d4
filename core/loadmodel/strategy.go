package loadmodel

import (
	"math"
	"slices"

	"github.com/ballast-sched/ballast/core/usage"
)

// MaxScore is the best score a strategy gives, the scheduler framework's MaxNodeScore.
const MaxScore = 100

// ResourceScorer turns the predicted usage of one resource, in percent, into
// a score between 0 and MaxScore.
type ResourceScorer func(predicted float64) float64

// ResourceWeight is one resource taking part in a score and its weight.
type ResourceWeight struct {
	Resource usage.Resource
	Weight   int64
}

// Combination names how the per-resource scores of a node become its score.
type Combination string

const (
	// Bottleneck scores a node by its worst resource: the lowest of the
	// per-resource scores. A node whose memory is taken counts as full
	// however idle its CPU is, and a big node whose every resource is cool
	// beats a small one that is cool on one resource only. Weights do not
	// apply: every resource with a positive weight takes part equally.
	Bottleneck Combination = "Bottleneck"
	// WeightedMean scores a node by the weighted mean of its per-resource
	// scores, as kube-scheduler's NodeResourcesFit does with requests.
	WeightedMean Combination = "WeightedMean"
)

// DefaultCombination is the combination of the scheduler's defaults, and the
// one the descheduler's model of it uses when it is given none.
const DefaultCombination = Bottleneck

// Combinations are the supported combinations, in a stable order.
var Combinations = []Combination{Bottleneck, WeightedMean}

// Score combines per-resource scores into a node score, over the resources
// in weights (weight above 0) that have a prediction:
//
//	Bottleneck:    score = round( min_r scorer(predicted_r) )
//	WeightedMean:  score = round( Σ weight_r × scorer(predicted_r) / Σ weight_r )
//
// The empty combination is DefaultCombination. Score returns 0 when no
// weighted resource has a prediction.
func (c Combination) Score(preds []Prediction, weights []ResourceWeight, scorer ResourceScorer) int64 {
	return int64(math.Round(c.Value(preds, weights, scorer)))
}

// Value is Score before rounding, for a score that is one term of a
// weighted sum (LoadAware's terms) and is rounded once, as the sum.
func (c Combination) Value(preds []Prediction, weights []ResourceWeight, scorer ResourceScorer) float64 {
	if c == "" {
		c = DefaultCombination
	}
	var sum, total float64
	low := math.Inf(1)
	for i, w := range weights {
		if w.Weight <= 0 {
			continue
		}
		// Predictions usually come in the weights' order.
		j := i
		if j >= len(preds) || preds[j].Resource != w.Resource {
			if j = slices.IndexFunc(preds, func(p Prediction) bool { return p.Resource == w.Resource }); j < 0 {
				continue
			}
		}
		s := scorer(preds[j].Total())
		sum += float64(w.Weight) * s
		total += float64(w.Weight)
		low = min(low, s)
	}
	if total == 0 {
		return 0
	}
	if c == Bottleneck {
		return low
	}
	return sum / total
}

// LeastLoaded prefers the coolest node:
//
//	score = 100 − u        with u = predicted usage clamped to [0, 100]
func LeastLoaded(predicted float64) float64 {
	return MaxScore - clampPercent(predicted)
}

// TargetPacking returns a scorer with the semantics of Trimaran's
// TargetLoadPacking: it fills nodes up to target percent, then prefers the
// least loaded. With u the predicted usage and t the target:
//
//	u ≤ t:        score = t + (100 − t) × u / t     (rises from t at idle to 100 at the target)
//	t < u ≤ 100:  score = t × (100 − u) / (100 − t) (falls from 100 at the target to 0 when full)
//	u > 100:      score = 0
//
// A target of 0 or less scores like LeastLoaded; 100 or more like pure packing.
func TargetPacking(target float64) ResourceScorer {
	return func(predicted float64) float64 {
		if math.IsNaN(predicted) || predicted > MaxScore {
			return 0
		}
		u := math.Max(predicted, 0)
		switch {
		case target <= 0:
			return LeastLoaded(u)
		case target >= MaxScore:
			return u
		case u <= target:
			return target + (MaxScore-target)*u/target
		default:
			return target * (MaxScore - u) / (MaxScore - target)
		}
	}
}
