package loadmodel

import (
	"fmt"
	"math"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/usage"
)

// Settings are the scheduling model: how Ballast's scheduler estimates a
// pod, predicts a node's usage with it, rejects a node and scores the rest.
// The scheduler's LoadAware args carry them inline (their JSON is LoadAware's
// args), and the descheduler reads the same rendered args from the
// scheduler's configuration (SchedulerSettings), so the two predict with one
// set of values. The zero value means the scheduler's defaults once
// SetDefaults has run.
//
// +k8s:deepcopy-gen=true
type Settings struct {
	// Thresholds are the predicted usages, in percent of allocatable, above
	// which LoadAware rejects a node. Only the resources listed are checked.
	// Defaults to {cpu: 85, memory: 90}.
	Thresholds map[usage.Resource]float64 `json:"thresholds,omitempty"`
	// ThresholdStatistics says, per resource, which number of the window
	// stands for a node's usage: Average, Latest or P95. Defaults to
	// {cpu: Average, memory: Latest}: CPU swings from one sample to the next,
	// so a single sample would make the filter flap and the scores jump, while
	// memory is a level (memory a process has just taken is taken now, not in
	// five minutes).
	ThresholdStatistics map[usage.Resource]Statistic `json:"thresholdStatistics,omitempty"`
	// ScoringStrategy configures the score.
	ScoringStrategy *ScoringStrategy `json:"scoringStrategy,omitempty"`
	// Window is the load-watcher window whose statistics are the node's
	// usage; it must be one load-watcher keeps (--windows). Defaults to 5m.
	Window *metav1.Duration `json:"window,omitempty"`
	// PodEstimate configures the estimate of the pod being placed and of pods
	// bound since the last usage sample.
	PodEstimate *PodEstimate `json:"podEstimate,omitempty"`
}

// ScoringStrategyType names how predicted usage becomes a score.
type ScoringStrategyType string

const (
	// StrategyLeastLoaded prefers the node with the lowest predicted usage
	// (spreading).
	StrategyLeastLoaded ScoringStrategyType = "LeastLoaded"
	// StrategyTargetPacking fills nodes up to a target utilisation, then
	// prefers the least loaded (Trimaran's TargetLoadPacking).
	StrategyTargetPacking ScoringStrategyType = "TargetPacking"
)

// ScoringStrategies are the supported strategies, in a stable order.
var ScoringStrategies = []ScoringStrategyType{StrategyLeastLoaded, StrategyTargetPacking}

// ResourceSpec is a resource taking part in a score, with its weight.
//
// +k8s:deepcopy-gen=true
type ResourceSpec struct {
	// Name is "cpu" or "memory".
	Name usage.Resource `json:"name"`
	// Weight is the resource's share of the node score; at least 1.
	Weight int64 `json:"weight,omitempty"`
}

// ScoringStrategy configures the score of predicted usage.
//
// +k8s:deepcopy-gen=true
type ScoringStrategy struct {
	// Type is LeastLoaded or TargetPacking. Defaults to LeastLoaded.
	Type ScoringStrategyType `json:"type,omitempty"`
	// Resources are the resources scored, with their weights. Defaults to
	// cpu and memory, weight 1 each.
	Resources []ResourceSpec `json:"resources,omitempty"`
	// Combine is how the resources' scores make the node's: Bottleneck (the
	// lowest, the default) or WeightedMean (weighted by Resources). Weights
	// apply only to WeightedMean, so Bottleneck asks for equal weights.
	Combine Combination `json:"combine,omitempty"`
	// TargetUtilization is the usage, in percent, TargetPacking fills nodes up
	// to. Defaults to 70. Ignored by LeastLoaded.
	TargetUtilization *float64 `json:"targetUtilization,omitempty"`
	// Weight is the weight of this score, the predicted usage's, among the
	// terms of LoadAware's score (its variationRisk and podCountBalance);
	// 1–100. Defaults to 1. With no other term it changes nothing, and the
	// descheduler, which predicts where a pod goes, does not read it.
	Weight int64 `json:"weight,omitempty"`
}

// PodEstimate says how to guess the usage of a pod before it is measured.
//
// +k8s:deepcopy-gen=true
type PodEstimate struct {
	// RequestMultiplier scales each container's request (capped at its limit).
	// Defaults to 1.0.
	RequestMultiplier *float64 `json:"requestMultiplier,omitempty"`
	// DefaultCPU is assumed for a container without a CPU request or limit.
	// Defaults to 100m.
	DefaultCPU *resource.Quantity `json:"defaultCPU,omitempty"`
	// DefaultMemory is assumed for a container without a memory request or
	// limit. Defaults to 200Mi.
	DefaultMemory *resource.Quantity `json:"defaultMemory,omitempty"`
}

// Defaults of the settings, as documented on their fields.
const (
	DefaultTargetUtilization = 70.0
	DefaultWindow            = 5 * time.Minute
	DefaultRequestMultiplier = 1.0
	// DefaultTermWeight is the weight of each term of LoadAware's score.
	DefaultTermWeight = 1
)

// Default per-container estimates for containers without requests or
// limits (DefaultEstimateOptions as quantities).
var (
	DefaultEstimateCPU    = resource.MustParse("100m")
	DefaultEstimateMemory = resource.MustParse("200Mi")
)

// Weights a resource or a score term may have, as for kube-scheduler's
// NodeResourcesFit.
const (
	MinWeight = 1
	MaxWeight = 100
)

// DefaultResources are the resources scored unless configured: cpu and
// memory, weight 1 each.
func DefaultResources() []ResourceSpec {
	return []ResourceSpec{{Name: usage.CPU, Weight: 1}, {Name: usage.Memory, Weight: 1}}
}

// DefaultSettings returns the scheduler's default settings, defaulted.
func DefaultSettings() Settings {
	s := Settings{}
	s.SetDefaults()
	return s
}

// SetDefaults fills the unset fields of s.
func (s *Settings) SetDefaults() {
	if s.Thresholds == nil {
		s.Thresholds = DefaultThresholds()
	}
	// The resources not named read the default statistics.
	s.ThresholdStatistics = Statistics(s.ThresholdStatistics).Complete()
	if s.ScoringStrategy == nil {
		s.ScoringStrategy = &ScoringStrategy{}
	}
	st := s.ScoringStrategy
	if st.Type == "" {
		st.Type = StrategyLeastLoaded
	}
	if len(st.Resources) == 0 {
		st.Resources = DefaultResources()
	}
	if st.Combine == "" {
		st.Combine = DefaultCombination
	}
	if st.TargetUtilization == nil {
		st.TargetUtilization = ptr.To(DefaultTargetUtilization)
	}
	if st.Weight == 0 {
		st.Weight = DefaultTermWeight
	}
	if s.Window == nil {
		s.Window = &metav1.Duration{Duration: DefaultWindow}
	}
	if s.PodEstimate == nil {
		s.PodEstimate = &PodEstimate{}
	}
	s.PodEstimate.SetDefaults()
}

// SetDefaults fills the unset fields of e.
func (e *PodEstimate) SetDefaults() {
	if e.RequestMultiplier == nil {
		e.RequestMultiplier = ptr.To(DefaultRequestMultiplier)
	}
	if e.DefaultCPU == nil {
		e.DefaultCPU = ptr.To(DefaultEstimateCPU.DeepCopy())
	}
	if e.DefaultMemory == nil {
		e.DefaultMemory = ptr.To(DefaultEstimateMemory.DeepCopy())
	}
}

// Options are e's estimate options; e must be defaulted.
func (e *PodEstimate) Options() EstimateOptions {
	return EstimateOptions{
		RequestMultiplier: *e.RequestMultiplier,
		DefaultMilliCPU:   e.DefaultCPU.MilliValue(),
		DefaultMemory:     e.DefaultMemory.Value(),
	}
}

// The readings below take defaulted settings.

// Scorer is the per-resource scorer of the settings' strategy.
func (s *Settings) Scorer() ResourceScorer {
	if st := s.ScoringStrategy; st.Type == StrategyTargetPacking {
		return TargetPacking(*st.TargetUtilization)
	}
	return LeastLoaded
}

// Weights are the scored resources with their weights.
func (s *Settings) Weights() []ResourceWeight {
	out := make([]ResourceWeight, 0, len(s.ScoringStrategy.Resources))
	for _, r := range s.ScoringStrategy.Resources {
		out = append(out, ResourceWeight{Resource: r.Name, Weight: r.Weight})
	}
	return out
}

// Statistics are the statistic read for each resource.
func (s *Settings) Statistics() Statistics { return Statistics(s.ThresholdStatistics) }

// UsageWindow is the load-watcher window the settings read.
func (s *Settings) UsageWindow() usage.Window { return usage.Window(s.Window.Duration) }

var supportedResources = func() sets.Set[string] {
	out := sets.New[string]()
	for _, r := range usage.Resources {
		out.Insert(string(r))
	}
	return out
}()

// ValidateSettings checks defaulted settings and returns every problem, each
// with its field path under path.
func ValidateSettings(path *field.Path, s *Settings) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, ValidatePercentMap(path.Child("thresholds"), s.Thresholds)...)
	errs = append(errs, ValidateStatistics(path.Child("thresholdStatistics"), s.ThresholdStatistics)...)
	if st := s.ScoringStrategy; st == nil {
		errs = append(errs, field.Required(path.Child("scoringStrategy"), ""))
	} else {
		sp := path.Child("scoringStrategy")
		if !slices.Contains(ScoringStrategies, st.Type) {
			errs = append(errs, field.NotSupported(sp.Child("type"), st.Type, ScoringStrategies))
		}
		errs = append(errs, ValidateResources(sp.Child("resources"), st.Resources)...)
		errs = append(errs, validateCombine(sp, st)...)
		if t := st.TargetUtilization; t == nil || !(*t > 0 && *t <= 100) {
			errs = append(errs, field.Invalid(sp.Child("targetUtilization"), deref(t), "must be above 0 and at most 100"))
		}
		errs = append(errs, ValidateWeight(sp.Child("weight"), st.Weight)...)
	}
	errs = append(errs, ValidateWindow(path.Child("window"), s.Window)...)
	errs = append(errs, ValidatePodEstimate(path.Child("podEstimate"), s.PodEstimate)...)
	return errs
}

// ValidatePercentMap checks per-resource percentages: measured resources
// only, each above 0 (0 would reject every node, and so every pod) and at
// most 100.
func ValidatePercentMap(path *field.Path, m map[usage.Resource]float64) field.ErrorList {
	var errs field.ErrorList
	for _, r := range sortedKeys(m) {
		v := m[r]
		if !supportedResources.Has(string(r)) {
			errs = append(errs, field.NotSupported(path, r, sets.List(supportedResources)))
			continue
		}
		if !Finite(v) || v <= 0 || v > 100 {
			errs = append(errs, field.Invalid(path.Key(string(r)), v, "must be a percentage above 0 and at most 100"))
		}
	}
	return errs
}

// ValidateResources checks the resources of a score: at least one, each
// measured, named once and weighted 1–100.
func ValidateResources(path *field.Path, rs []ResourceSpec) field.ErrorList {
	var errs field.ErrorList
	if len(rs) == 0 {
		return append(errs, field.Required(path, "at least one resource must be scored"))
	}
	seen := sets.New[usage.Resource]()
	for i, r := range rs {
		p := path.Index(i)
		if !supportedResources.Has(string(r.Name)) {
			errs = append(errs, field.NotSupported(p.Child("name"), r.Name, sets.List(supportedResources)))
		} else if seen.Has(r.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), r.Name))
		}
		seen.Insert(r.Name)
		errs = append(errs, ValidateWeight(p.Child("weight"), r.Weight)...)
	}
	return errs
}

// ValidateWeight checks a weight: 1–100.
func ValidateWeight(path *field.Path, w int64) field.ErrorList {
	if w < MinWeight || w > MaxWeight {
		return field.ErrorList{field.Invalid(path, w, "must be between 1 and 100")}
	}
	return nil
}

// validateCombine refuses an unknown combination, and unequal weights under
// Bottleneck: a minimum has no use for them, and a user who set them wants
// the weighted mean.
func validateCombine(path *field.Path, s *ScoringStrategy) field.ErrorList {
	if !slices.Contains(Combinations, s.Combine) {
		return field.ErrorList{field.NotSupported(path.Child("combine"), s.Combine, Combinations)}
	}
	if s.Combine != Bottleneck {
		return nil
	}
	for _, r := range s.Resources {
		if r.Weight < MinWeight || r.Weight > MaxWeight {
			return nil // ValidateResources names it
		}
	}
	for i, r := range s.Resources {
		if r.Weight != s.Resources[0].Weight {
			return field.ErrorList{field.Invalid(path.Child("resources").Index(i).Child("weight"), r.Weight,
				fmt.Sprintf("weights apply only with combine: %s; give every resource the same weight, or set combine: %s", WeightedMean, WeightedMean))}
		}
	}
	return nil
}

// ValidateWindow checks a load-watcher window: set and positive.
func ValidateWindow(path *field.Path, w *metav1.Duration) field.ErrorList {
	if w == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	if w.Duration <= 0 {
		return field.ErrorList{field.Invalid(path, w.Duration.String(), "must be a positive duration, one of load-watcher's windows (for example 5m)")}
	}
	return nil
}

// ValidatePodEstimate checks a defaulted pod estimate.
func ValidatePodEstimate(path *field.Path, e *PodEstimate) field.ErrorList {
	if e == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if m := e.RequestMultiplier; m == nil || !Finite(*m) || *m <= 0 {
		errs = append(errs, field.Invalid(path.Child("requestMultiplier"), deref(m), "must be a number above 0"))
	}
	// Options reads the defaults as int64 millicores and bytes, where a
	// larger quantity wraps around to a negative one.
	if q := e.DefaultCPU; q == nil || q.Sign() < 0 || q.Cmp(maxMilliQuantity) > 0 {
		errs = append(errs, field.Invalid(path.Child("defaultCPU"), q, "must be a quantity of at least 0 and at most "+maxMilliQuantity.String()))
	}
	if q := e.DefaultMemory; q == nil || q.Sign() < 0 || q.Cmp(maxQuantity) > 0 {
		errs = append(errs, field.Invalid(path.Child("defaultMemory"), q, "must be a quantity of at least 0 and at most "+maxQuantity.String()))
	}
	return errs
}

// The largest quantities an int64 of thousandths, and of units, holds.
var (
	maxMilliQuantity = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)
	maxQuantity      = *resource.NewQuantity(math.MaxInt64, resource.BinarySI)
)

// Finite reports whether v is a number, neither NaN nor infinite.
func Finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func sortedKeys[V any](m map[usage.Resource]V) []usage.Resource {
	keys := make([]usage.Resource, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
