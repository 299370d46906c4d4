package loadscore

import (
	"math"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
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

// WeightedScore combines per-resource scores into a node score:
//
//	score = round( Σ weight_r × scorer(predicted_r) / Σ weight_r )
//
// over the resources in weights that have a prediction. It returns 0 when no
// weighted resource has one.
func WeightedScore(preds []Prediction, weights []ResourceWeight, scorer ResourceScorer) int64 {
	var sum, total float64
	for _, w := range weights {
		if w.Weight <= 0 {
			continue
		}
		for _, p := range preds {
			if p.Resource == w.Resource {
				sum += float64(w.Weight) * scorer(p.Total())
				total += float64(w.Weight)
				break
			}
		}
	}
	if total == 0 {
		return 0
	}
	return int64(math.Round(sum / total))
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
