package config

import (
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

var supportedResources = sets.New(string(usage.CPU), string(usage.Memory))

// ValidateLoadAwareArgs checks defaulted LoadAware args and reports every
// problem at once, each with its field path.
func ValidateLoadAwareArgs(path *field.Path, args *LoadAwareArgs) error {
	var errs field.ErrorList
	errs = append(errs, loadmodel.ValidateSettings(path, &args.Settings)...)
	if t := args.VariationRisk; t != nil {
		tp := path.Child("variationRisk")
		errs = append(errs, loadmodel.ValidateWeight(tp.Child("weight"), t.Weight)...)
		s := t.Settings()
		errs = append(errs, validateRisk(tp, &s)...)
	}
	if t := args.PodCountBalance; t != nil {
		errs = append(errs, loadmodel.ValidateWeight(path.Child("podCountBalance", "weight"), t.Weight)...)
	}
	if m := args.PlannedMoves; m != nil {
		errs = append(errs, validatePlannedMoves(path.Child("plannedMoves"), m)...)
	}
	return errs.ToAggregate()
}

// validatePlannedMoves checks the ConfigMap's name and the validity.
func validatePlannedMoves(path *field.Path, m *PlannedMoves) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name, value string
		valid       func(string) []string
	}{
		{"namespace", m.Namespace, validation.IsDNS1123Label},
		{"name", m.Name, validation.IsDNS1123Subdomain},
	} {
		if f.value == "" {
			errs = append(errs, field.Required(path.Child(f.name), "the descheduler's moves ConfigMap"))
		} else if msgs := f.valid(f.value); len(msgs) > 0 {
			errs = append(errs, field.Invalid(path.Child(f.name), f.value, strings.Join(msgs, "; ")))
		}
	}
	if d := m.ValidFor; d != nil && (d.Duration < time.Second || d.Duration > MaxPlannedMovesValidFor) {
		errs = append(errs, field.Invalid(path.Child("validFor"), d.Duration.String(), "must be between 1s and "+MaxPlannedMovesValidFor.String()))
	}
	return errs
}

// ValidateLoadVariationRiskBalancingArgs checks defaulted
// LoadVariationRiskBalancing args, with field paths.
func ValidateLoadVariationRiskBalancingArgs(path *field.Path, args *LoadVariationRiskBalancingArgs) error {
	return validateRisk(path, args).ToAggregate()
}

func validateRisk(path *field.Path, args *LoadVariationRiskBalancingArgs) field.ErrorList {
	var errs field.ErrorList
	if m := args.SafeVarianceMargin; m == nil || !loadmodel.Finite(*m) || *m < 0 {
		errs = append(errs, field.Invalid(path.Child("safeVarianceMargin"), deref(m), "must be a number of at least 0"))
	}
	if s := args.SafeVarianceSensitivity; s == nil || !loadmodel.Finite(*s) || *s <= 0 {
		errs = append(errs, field.Invalid(path.Child("safeVarianceSensitivity"), deref(s), "must be a number above 0"))
	}
	errs = append(errs, loadmodel.ValidateWindow(path.Child("window"), args.Window)...)
	errs = append(errs, loadmodel.ValidateResources(path.Child("resources"), args.Resources)...)
	return errs
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
		if !loadmodel.Finite(v) || v < 1 {
			errs = append(errs, field.Invalid(op.Key(string(r)), v, "must be a ratio of at least 1"))
		}
	}
	errs = append(errs, loadmodel.ValidatePercentMap(path.Child("maxUsage"), args.MaxUsage)...)
	errs = append(errs, loadmodel.ValidateWindow(path.Child("window"), args.Window)...)
	errs = append(errs, loadmodel.ValidatePodEstimate(path.Child("podEstimate"), args.PodEstimate)...)
	return errs.ToAggregate()
}

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
