package loadmodel

import "math"

// RiskInput is the usage statistics of one resource on one node over a window.
type RiskInput struct {
	// Avg is the mean usage over the window, in percent.
	Avg float64
	// Std is the standard deviation of usage over the window, in percent.
	Std float64
	// Added is the usage the pod (and pods bound since the sample) would add, in percent.
	Added float64
}

// Risk returns the risk of a resource with the semantics of Trimaran's
// LoadVariationRiskBalancing, a number between 0 (idle and steady) and 1
// (full, or wildly varying):
//
//	mu    = clamp((avg + added) / 100, 0, 1)
//	sigma = clamp(margin × (std / 100)^(1 / sensitivity), 0, 1)
//	risk  = (mu + sigma) / 2
//
// A larger margin weighs variation more; a larger sensitivity makes small
// variations count (the root lifts fractions towards 1). Non-finite inputs are
// treated as full risk.
func Risk(in RiskInput, margin, sensitivity float64) float64 {
	for _, v := range []float64{in.Avg, in.Std, in.Added, margin, sensitivity} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 1
		}
	}
	return RiskOf(in.Avg, in.Added, RiskSigma(in.Std, margin, sensitivity))
}

// RiskSigma is the variation's half of Risk, which depends on the node
// alone and not on what a pod adds, so it can be worked out once per usage
// sample:
//
//	sigma = clamp(margin × (std / 100)^(1 / sensitivity), 0, 1)
//
// Its inputs must be finite (see Risk).
func RiskSigma(std, margin, sensitivity float64) float64 {
	sigma := clampUnit(math.Max(std, 0) / 100)
	if sensitivity > 0 {
		sigma = math.Pow(sigma, 1/sensitivity)
	}
	return clampUnit(margin * sigma)
}

// RiskOf is Risk from the node's mean avg, what is added to it and its
// RiskSigma: (clamp((avg + added) / 100, 0, 1) + sigma) / 2. Its inputs must
// be finite.
func RiskOf(avg, added, sigma float64) float64 {
	mu := clampUnit((math.Max(avg, 0) + math.Max(added, 0)) / 100)
	return (mu + sigma) / 2
}

// RiskScore turns a risk into a score: 100 × (1 − risk).
func RiskScore(risk float64) float64 {
	return MaxScore * (1 - clampUnit(risk))
}

func clampUnit(v float64) float64 {
	switch {
	case math.IsNaN(v) || v > 1:
		return 1
	case v < 0:
		return 0
	}
	return v
}
