package loadmodel

import (
	"math"

	"github.com/ballast-sched/ballast/core/usage"
)

// Percent returns amount as a percentage of allocatable:
//
//	percent = 100 × amount / allocatable
//
// It returns 0 when allocatable is not positive: such a node cannot take the
// pod anyway, and request-based fit will say so.
func Percent(amount, allocatable int64) float64 {
	if allocatable <= 0 {
		return 0
	}
	return 100 * float64(amount) / float64(allocatable)
}

// Valid reports whether a usage percentage is a number a decision can rest
// on: finite and not negative. Usage above 100 % is valid (a node can run over
// its allocatable).
func Valid(percent float64) bool {
	return !math.IsNaN(percent) && !math.IsInf(percent, 0) && percent >= 0
}

// Prediction is the expected usage of one resource on one node once a pod
// lands there, in percent of allocatable, split by where it comes from.
type Prediction struct {
	// Resource is the resource predicted.
	Resource usage.Resource
	// Current is the node's measured usage: the statistic configured for the
	// resource, from the newest window.
	Current float64
	// Pending is the estimated usage of pods bound after that sample, which
	// the sample cannot contain yet (anti-herding).
	Pending float64
	// Pod is the estimated usage of the pod being placed.
	Pod float64
}

// Total returns the predicted usage: Current + Pending + Pod.
func (p Prediction) Total() float64 { return p.Current + p.Pending + p.Pod }

// Predict appends to preds, for each of resources, the node's predicted
// usage once a pod lands: its current usage (current(r), in percent of
// allocatable) plus the pending and pod amounts against allocatable:
//
//	total = current + 100 × pending / allocatable + 100 × pod / allocatable
//
// ok is false, and the predictions so far are returned, when current has no
// figure for a resource or the figure is not a valid number. Callers pass a
// small stack buffer (preds[:0]) so predicting a node does not allocate.
func Predict(preds []Prediction, resources []usage.Resource, current func(usage.Resource) (float64, bool),
	pending, pod, allocatable Amount) (_ []Prediction, ok bool) {
	for _, r := range resources {
		cur, ok := current(r)
		if !ok {
			return preds, false
		}
		p, ok := PredictResource(r, cur, pending, pod, allocatable)
		if !ok {
			return preds, false
		}
		preds = append(preds, p)
	}
	return preds, true
}

// PredictResource is Predict for one resource r whose current usage is
// current: ok is false when current is not a valid number.
func PredictResource(r usage.Resource, current float64, pending, pod, allocatable Amount) (_ Prediction, ok bool) {
	if !Valid(current) {
		return Prediction{}, false
	}
	alloc := allocatable.Of(r)
	return Prediction{
		Resource: r,
		Current:  current,
		Pending:  Percent(pending.Of(r), alloc),
		Pod:      Percent(pod.Of(r), alloc),
	}, true
}

// clampPercent bounds p to [0, 100]; NaN counts as fully used.
func clampPercent(p float64) float64 {
	switch {
	case math.IsNaN(p) || p > 100:
		return 100
	case p < 0:
		return 0
	}
	return p
}
