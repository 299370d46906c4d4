package config

import (
	"fmt"
	"math"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

var (
	supportedResources  = sets.New(string(usage.CPU), string(usage.Memory))
	supportedStrategies = sets.New(string(LeastLoaded), string(TargetPacking))
)

// Weights a resource may have, as for kube-scheduler's NodeResourcesFit.
const (
	minWeight = 1
	maxWeight = 100
)

// ValidateLoadAwareArgs checks defaulted LoadAware args and reports every
// problem at once, each with its field path.
func ValidateLoadAwareArgs(path *field.Path, args *LoadAwareArgs) error {
	var errs field.ErrorList
	errs = append(errs, validatePercentMap(path.Child("thresholds"), args.Thresholds)...)
	errs = append(errs, loadmodel.ValidateStatistics(path.Child("thresholdStatistics"), args.ThresholdStatistics)...)
	if s := args.ScoringStrategy; s == nil {
		errs = append(errs, field.Required(path.Child("scoringStrategy"), ""))
	} else {
		sp := path.Child("scoringStrategy")
		if !supportedStrategies.Has(string(s.Type)) {
			errs = append(errs, field.NotSupported(sp.Child("type"), s.Type, sets.List(supportedStrategies)))
		}
		errs = append(errs, validateResources(sp.Child("resources"), s.Resources)...)
		errs = append(errs, validateCombine(sp, s)...)
		if t := s.TargetUtilization; t == nil || !(*t > 0 && *t <= 100) {
			errs = append(errs, field.Invalid(sp.Child("targetUtilization"), deref(t), "must be above 0 and at most 100"))
		}
		errs = append(errs, validateWeight(sp.Child("weight"), s.Weight)...)
	}
	errs = append(errs, validateWindow(path.Child("window"), args.Window)...)
	errs = append(errs, validatePodEstimate(path.Child("podEstimate"), args.PodEstimate)...)
	if t := args.VariationRisk; t != nil {
		tp := path.Child("variationRisk")
		errs = append(errs, validateWeight(tp.Child("weight"), t.Weight)...)
		s := t.Settings()
		errs = append(errs, validateRisk(tp, &s)...)
	}
	if t := args.PodCountBalance; t != nil {
		errs = append(errs, validateWeight(path.Child("podCountBalance", "weight"), t.Weight)...)
	}
	return errs.ToAggregate()
}

// ValidateLoadVariationRiskBalancingArgs checks defaulted
// LoadVariationRiskBalancing args, with field paths.
func ValidateLoadVariationRiskBalancingArgs(path *field.Path, args *LoadVariationRiskBalancingArgs) error {
	return validateRisk(path, args).ToAggregate()
}

func validateRisk(path *field.Path, args *LoadVariationRiskBalancingArgs) field.ErrorList {
	var errs field.ErrorList
	if m := args.SafeVarianceMargin; m == nil || !finite(*m) || *m < 0 {
		errs = append(errs, field.Invalid(path.Child("safeVarianceMargin"), deref(m), "must be a number of at least 0"))
	}
	if s := args.SafeVarianceSensitivity; s == nil || !finite(*s) || *s <= 0 {
		errs = append(errs, field.Invalid(path.Child("safeVarianceSensitivity"), deref(s), "must be a number above 0"))
	}
	errs = append(errs, validateWindow(path.Child("window"), args.Window)...)
	errs = append(errs, validateResources(path.Child("resources"), args.Resources)...)
	return errs
}

// validateWeight checks the weight of a term of LoadAware's score.
func validateWeight(path *field.Path, w int64) field.ErrorList {
	if w < minWeight || w > maxWeight {
		return field.ErrorList{field.Invalid(path, w, "must be between 1 and 100")}
	}
	return nil
}

// ValidateUsageAwareFitArgs checks defaulted UsageAwareFit args, with field paths.
func ValidateUsageAwareFitArgs(path *field.Path, args *UsageAwareFitArgs) error {
	var errs field.ErrorList
	op := path.Child("maxOvercommit")
	for _, r := range sortedKeys(args.MaxOvercommit) {
		v := args.MaxOvercommit[r]
		if !supportedResources.Has(string(r)) {
			errs = append(errs, field.NotSupported(op, r, sets.List(supportedResources)))
			continue
		}
		if !finite(v) || v < 1 {
			errs = append(errs, field.Invalid(op.Key(string(r)), v, "must be a ratio of at least 1"))
		}
	}
	errs = append(errs, validatePercentMap(path.Child("maxUsage"), args.MaxUsage)...)
	errs = append(errs, validateWindow(path.Child("window"), args.Window)...)
	errs = append(errs, validatePodEstimate(path.Child("podEstimate"), args.PodEstimate)...)
	return errs.ToAggregate()
}

func validatePercentMap(path *field.Path, m map[usage.Resource]float64) field.ErrorList {
	var errs field.ErrorList
	for _, r := range sortedKeys(m) {
		v := m[r]
		if !supportedResources.Has(string(r)) {
			errs = append(errs, field.NotSupported(path, r, sets.List(supportedResources)))
			continue
		}
		// 0 would reject every node, and so every pod.
		if !finite(v) || v <= 0 || v > 100 {
			errs = append(errs, field.Invalid(path.Key(string(r)), v, "must be a percentage above 0 and at most 100"))
		}
	}
	return errs
}

func validateResources(path *field.Path, rs []ResourceSpec) field.ErrorList {
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
		errs = append(errs, validateWeight(p.Child("weight"), r.Weight)...)
	}
	return errs
}

// validateCombine refuses an unknown combination, and unequal weights under
// Bottleneck: a minimum has no use for them, and a user who set them wants
// the weighted mean.
func validateCombine(path *field.Path, s *ScoringStrategy) field.ErrorList {
	supported := sets.New(loadmodel.Combinations...)
	if !supported.Has(s.Combine) {
		return field.ErrorList{field.NotSupported(path.Child("combine"), s.Combine, loadmodel.Combinations)}
	}
	if s.Combine != Bottleneck {
		return nil
	}
	for _, r := range s.Resources {
		if r.Weight < minWeight || r.Weight > maxWeight {
			return nil // validateResources names it
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

func validateWindow(path *field.Path, w *metav1.Duration) field.ErrorList {
	if w == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	if w.Duration <= 0 {
		return field.ErrorList{field.Invalid(path, w.Duration.String(), "must be a positive duration, one of load-watcher's windows (for example 5m)")}
	}
	return nil
}

func validatePodEstimate(path *field.Path, e *PodEstimate) field.ErrorList {
	if e == nil {
		return field.ErrorList{field.Required(path, "")}
	}
	var errs field.ErrorList
	if m := e.RequestMultiplier; m == nil || !finite(*m) || *m <= 0 {
		errs = append(errs, field.Invalid(path.Child("requestMultiplier"), deref(m), "must be a number above 0"))
	}
	if q := e.DefaultCPU; q == nil || q.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("defaultCPU"), q, "must be a quantity of at least 0"))
	}
	if q := e.DefaultMemory; q == nil || q.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("defaultMemory"), q, "must be a quantity of at least 0"))
	}
	return errs
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func sortedKeys[V any](m map[usage.Resource]V) []usage.Resource {
	keys := sets.New[usage.Resource]()
	for k := range m {
		keys.Insert(k)
	}
	return sets.List(keys)
}
