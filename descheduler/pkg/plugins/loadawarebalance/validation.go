package loadawarebalance

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/load-watcher/pkg/loadscore"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

var supportedResources = sets.New(usage.Resources...)

// ValidateLoadAwareBalanceArgs checks the args as they will be used, that is
// after defaulting, and reports every problem with its field path.
func ValidateLoadAwareBalanceArgs(obj runtime.Object) error {
	args, ok := obj.(*LoadAwareBalanceArgs)
	if !ok {
		return fmt.Errorf("want args to be of type LoadAwareBalanceArgs, got %T", obj)
	}
	defaulted := args.DeepCopy()
	SetDefaults_LoadAwareBalanceArgs(defaulted)
	return validateArgs(nil, defaulted).ToAggregate()
}

func validateArgs(path *field.Path, args *LoadAwareBalanceArgs) field.ErrorList {
	var errs field.ErrorList
	highPath, lowPath := path.Child("highThresholds"), path.Child("lowThresholds")
	errs = append(errs, ValidateThresholds(highPath, args.HighThresholds)...)
	errs = append(errs, ValidateThresholds(lowPath, args.LowThresholds)...)
	for _, r := range sortedResources(args.LowThresholds) {
		low := args.LowThresholds[r]
		if high, ok := args.HighThresholds[r]; ok && low >= high {
			errs = append(errs, field.Invalid(lowPath.Key(string(r)), low,
				fmt.Sprintf("must be below highThresholds[%s] (%v)", r, high)))
		}
	}
	if len(args.DeviationThresholds) > 0 {
		errs = append(errs, ValidateThresholds(path.Child("deviationThresholds"), args.DeviationThresholds)...)
	}
	if v := *args.ConsecutiveHotCycles; v < 1 {
		errs = append(errs, field.Invalid(path.Child("consecutiveHotCycles"), v, "must be at least 1"))
	}
	errs = append(errs, ValidateEvictionSettings(path, EvictionSettings{
		Cooldown: args.EvictionCooldown.Duration, Window: args.Window.Duration,
		Namespaces: args.Namespaces, SchedulerNames: args.SchedulerNames, Statistics: args.ThresholdStatistics,
		PerNode: *args.MaxEvictionsPerNode, PerNamespace: *args.MaxEvictionsPerNamespace, PerCycle: *args.MaxEvictionsPerCycle,
	})...)
	return SortByField(errs)
}

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

// EvictionSettings are the limits, cooldown, window, statistics, namespaces
// and scheduler names every Ballast balance plugin takes.
type EvictionSettings struct {
	Cooldown, Window                time.Duration
	PerNode, PerNamespace, PerCycle int32
	Namespaces                      *api.Namespaces
	SchedulerNames                  []string
	Statistics                      loadscore.Statistics
}

// ValidateEvictionSettings checks the settings shared by Ballast's balance
// plugins, with paths under path.
func ValidateEvictionSettings(path *field.Path, s EvictionSettings) field.ErrorList {
	var errs field.ErrorList
	if s.Cooldown < 0 {
		errs = append(errs, field.Invalid(path.Child("evictionCooldown"), s.Cooldown.String(), "must not be negative"))
	}
	for name, v := range map[string]int32{
		"maxEvictionsPerNode":      s.PerNode,
		"maxEvictionsPerNamespace": s.PerNamespace,
		"maxEvictionsPerCycle":     s.PerCycle,
	} {
		if v < 1 {
			errs = append(errs, field.Invalid(path.Child(name), v, "must be at least 1; use dryRun to stop evictions"))
		}
	}
	if s.Window <= 0 {
		errs = append(errs, field.Invalid(path.Child("window"), s.Window.String(), "must be a positive duration such as 5m"))
	}
	if ns := s.Namespaces; ns != nil && len(ns.Include) > 0 && len(ns.Exclude) > 0 {
		errs = append(errs, field.Invalid(path.Child("namespaces"), "include and exclude", "only one of include and exclude may be set"))
	}
	errs = append(errs, loadscore.ValidateStatistics(path.Child("thresholdStatistics"), s.Statistics)...)
	return append(errs, validateSchedulerNames(path.Child("schedulerNames"), s.SchedulerNames)...)
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
