package balance

import (
	"maps"

	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// SchedulerModel is the LoadModel of the Ballast scheduler: it estimates
// pods, predicts usage, checks thresholds and scores nodes with the very
// functions and settings the scheduler's LoadAware plugin uses, so a
// destination judged good here is one the scheduler also prefers.
type SchedulerModel struct {
	// Settings are the scheduler's (its LoadAware args, read from its
	// configuration by loadmodel.SchedulerSettings); the scheduler's defaults
	// where unset. LoadAware's other score terms (the variation risk, the free
	// pod slots) are not predicted.
	Settings loadmodel.Settings
	// weights and scorer are read from Settings once (NewSchedulerModel),
	// not for every node Place judges.
	weights []loadmodel.ResourceWeight
	scorer  loadmodel.ResourceScorer
}

// NewSchedulerModel is the model of a scheduler running settings, defaulted.
func NewSchedulerModel(settings loadmodel.Settings) SchedulerModel {
	s := *settings.DeepCopy()
	s.SetDefaults()
	return SchedulerModel{Settings: s, weights: s.Weights(), scorer: s.Scorer()}
}

var _ LoadModel = SchedulerModel{}

// defaultModel is the zero model's: the scheduler's defaults; never written.
var defaultModel = NewSchedulerModel(loadmodel.Settings{})

// resolved is m as NewSchedulerModel builds it: the defaults' for the zero
// model, and m itself, its readings worked out, otherwise.
func (m SchedulerModel) resolved() SchedulerModel {
	if m.Settings.ScoringStrategy == nil {
		return defaultModel
	}
	if m.weights == nil {
		m.weights, m.scorer = m.Settings.Weights(), m.Settings.Scorer()
	}
	return m
}

func allocatableOf(node *v1.Node) loadmodel.Amount {
	return loadmodel.Amount{MilliCPU: node.Status.Allocatable.Cpu().MilliValue(), Memory: node.Status.Allocatable.Memory().Value()}
}

// SchedulerThresholds are where the scheduler stops placing pods.
func (m SchedulerModel) SchedulerThresholds() ResourceThresholds {
	return maps.Clone(m.resolved().Settings.Thresholds)
}

// EstimatePod is the scheduler's estimate of pod.
func (m SchedulerModel) EstimatePod(pod *v1.Pod) loadmodel.Amount {
	return loadmodel.EstimatePod(pod, m.resolved().Settings.PodEstimate.Options())
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
// high threshold or the scheduler's own would be exceeded, and otherwise
// scores it with the scheduler's strategy and combination, as LoadAware does.
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
	r := m.resolved()
	// A node LoadAware would filter out is never a destination, whatever
	// high says: the replacement would land elsewhere.
	if v := loadmodel.CheckThresholds(preds, r.Settings.Thresholds); len(v) > 0 {
		return Placement{Reason: v[0].Reason() + " (the scheduler's threshold)"}
	}
	return Placement{Fits: true, Score: r.Settings.ScoringStrategy.Combine.Score(preds, r.weights, r.scorer)}
}
