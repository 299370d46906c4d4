package balance

import (
	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// SchedulerModel is the LoadModel of the Ballast scheduler: it estimates
// pods, predicts usage, checks thresholds and scores nodes with the very
// functions the scheduler's LoadAware plugin uses, so a destination judged
// good here is one the scheduler also prefers.
type SchedulerModel struct {
	// Estimate says how to guess a pod's usage; the scheduler's defaults
	// (requests, or 100m and 200Mi without any) when zero.
	Estimate loadmodel.EstimateOptions
	// Weights of the resources in the score; cpu and memory equally when empty.
	Weights []loadmodel.ResourceWeight
	// Combine is how the resources' scores make a node's; the scheduler's
	// default (loadmodel.DefaultCombination) when empty.
	Combine loadmodel.Combination
	// Thresholds are the scheduler's LoadAware thresholds, above which it
	// places no pod on a node; its defaults when empty.
	Thresholds ResourceThresholds
}

var _ LoadModel = SchedulerModel{}

func (m SchedulerModel) options() loadmodel.EstimateOptions {
	if m.Estimate == (loadmodel.EstimateOptions{}) {
		return loadmodel.DefaultEstimateOptions
	}
	return m.Estimate
}

func (m SchedulerModel) weights() []loadmodel.ResourceWeight {
	if len(m.Weights) == 0 {
		return []loadmodel.ResourceWeight{{Resource: usage.CPU, Weight: 1}, {Resource: usage.Memory, Weight: 1}}
	}
	return m.Weights
}

func allocatableOf(node *v1.Node) loadmodel.Amount {
	return loadmodel.Amount{MilliCPU: node.Status.Allocatable.Cpu().MilliValue(), Memory: node.Status.Allocatable.Memory().Value()}
}

// SchedulerThresholds are where the scheduler stops placing pods.
func (m SchedulerModel) SchedulerThresholds() ResourceThresholds {
	if len(m.Thresholds) == 0 {
		return loadmodel.DefaultThresholds()
	}
	return m.Thresholds
}

// EstimatePod is the scheduler's estimate of pod.
func (m SchedulerModel) EstimatePod(pod *v1.Pod) loadmodel.Amount {
	return loadmodel.EstimatePod(pod, m.options())
}

// Share is amount in percent of node's allocatable.
func (m SchedulerModel) Share(amount loadmodel.Amount, node *v1.Node) NodeLoad {
	out := NodeLoad{}
	for _, r := range usage.Resources {
		out[r] = loadmodel.Percent(amount.Of(r), allocatableOf(node).Of(r))
	}
	return out
}

// Place predicts node's usage with a pod using est on it, rejects it when a
// high threshold would be exceeded and otherwise scores it least-loaded first,
// combining the resources as LoadAware does.
func (m SchedulerModel) Place(est loadmodel.Amount, node *v1.Node, current NodeLoad, high ResourceThresholds) Placement {
	var known []usage.Resource
	for _, r := range usage.Resources {
		if _, ok := current[r]; ok {
			known = append(known, r)
		}
	}
	read := func(r usage.Resource) (float64, bool) { return current[r], true }
	preds, ok := loadmodel.Predict(make([]loadmodel.Prediction, 0, len(known)), known, read, loadmodel.Amount{}, est, allocatableOf(node))
	if !ok {
		// Predict stops at the first resource whose usage is not a number.
		return Placement{Reason: "invalid usage of " + string(known[len(preds)])}
	}
	if v := loadmodel.CheckThresholds(preds, high); len(v) > 0 {
		return Placement{Reason: v[0].Reason()}
	}
	return Placement{Fits: true, Score: m.Combine.Score(preds, m.weights(), loadmodel.LeastLoaded)}
}
