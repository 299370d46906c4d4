package balance

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

var supportedResources = sets.New(usage.Resources...)

// ValidateThresholds checks a threshold map: cpu and/or memory, each a
// percentage above 0 and at most 100.
func ValidateThresholds(path *field.Path, thresholds ResourceThresholds) field.ErrorList {
	var errs field.ErrorList
	if len(thresholds) == 0 {
		return append(errs, field.Required(path, "at least one of cpu, memory"))
	}
	for _, r := range sortedResources(thresholds) {
		v := thresholds[r]
		if !supportedResources.Has(r) {
			errs = append(errs, field.NotSupported(path.Key(string(r)), r, sets.List(supportedResources)))
			continue
		}
		if v <= 0 || v > 100 {
			errs = append(errs, field.Invalid(path.Key(string(r)), v, "must be a percentage above 0 and at most 100"))
		}
	}
	return errs
}

func sortedResources(t ResourceThresholds) []usage.Resource {
	out := make([]usage.Resource, 0, len(t))
	for r := range t {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// ValidateEvictionArgs checks the settings every Ballast balance plugin
// takes, as they will be used (after SetDefaults_EvictionArgs), with paths
// under path.
func ValidateEvictionArgs(path *field.Path, a *EvictionArgs) field.ErrorList {
	var errs field.ErrorList
	if a.EvictionCooldown == nil || a.EvictionCooldown.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("evictionCooldown"), durationString(a.EvictionCooldown), "must not be negative"))
	}
	if a.BalanceCooldown == nil || a.BalanceCooldown.Duration < 0 {
		errs = append(errs, field.Invalid(path.Child("balanceCooldown"), durationString(a.BalanceCooldown), "must not be negative"))
	} else if a.EvictionCooldown != nil && a.BalanceCooldown.Duration < a.EvictionCooldown.Duration {
		errs = append(errs, field.Invalid(path.Child("balanceCooldown"), durationString(a.BalanceCooldown),
			"must be at least evictionCooldown ("+durationString(a.EvictionCooldown)+"): balancing would undo a move sooner than cooling a hot node may"))
	}
	for _, limit := range []struct {
		name string
		v    *int32
	}{
		{"maxEvictionsPerNode", a.MaxEvictionsPerNode},
		{"maxEvictionsPerNamespace", a.MaxEvictionsPerNamespace},
		{"maxEvictionsPerCycle", a.MaxEvictionsPerCycle},
	} {
		if limit.v == nil || *limit.v < 1 {
			errs = append(errs, field.Invalid(path.Child(limit.name), ptrValue(limit.v), "must be at least 1; use dryRun to stop evictions"))
		}
	}
	if a.Window == nil || a.Window.Duration <= 0 {
		errs = append(errs, field.Invalid(path.Child("window"), durationString(a.Window), "must be a positive duration such as 5m"))
	}
	if ns := a.Namespaces; ns != nil && len(ns.Include) > 0 && len(ns.Exclude) > 0 {
		errs = append(errs, field.Invalid(path.Child("namespaces"), "include and exclude", "only one of include and exclude may be set"))
	}
	errs = append(errs, loadmodel.ValidateStatistics(path.Child("thresholdStatistics"), a.ThresholdStatistics)...)
	if g := a.MemoryGrowthPerMinute; g == nil || g.Sign() < 0 {
		errs = append(errs, field.Invalid(path.Child("memoryGrowthPerMinute"), quantityString(g), "must be a memory quantity per minute such as 1Mi, or 0 to turn growth detection off"))
	}
	return append(errs, validateSchedulerNames(path.Child("schedulerNames"), a.SchedulerNames)...)
}

func durationString(d *metav1.Duration) string {
	if d == nil {
		return ""
	}
	return d.Duration.String()
}

func quantityString(q *resource.Quantity) string {
	if q == nil {
		return ""
	}
	return q.String()
}

func ptrValue(v *int32) int32 {
	if v == nil {
		return 0
	}
	return *v
}

// validateSchedulerNames refuses an empty list, which would move no pod or,
// read as "any scheduler", pods Ballast never places again; and empty or
// repeated names.
func validateSchedulerNames(path *field.Path, names []string) field.ErrorList {
	var errs field.ErrorList
	if len(names) == 0 {
		return append(errs, field.Required(path, "the scheduler profiles that place moved pods by real usage, e.g. ballast-scheduler"))
	}
	seen := sets.New[string]()
	for i, name := range names {
		switch {
		case name == "":
			errs = append(errs, field.Invalid(path.Index(i), name, "must not be empty"))
		case seen.Has(name):
			errs = append(errs, field.Duplicate(path.Index(i), name))
		}
		seen.Insert(name)
	}
	return errs
}

// SortByField orders errs by field path: map iteration is random, and readers
// and tests want a stable order.
func SortByField(errs field.ErrorList) field.ErrorList {
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		return strings.Compare(a.Field, b.Field)
	})
	return errs
}
