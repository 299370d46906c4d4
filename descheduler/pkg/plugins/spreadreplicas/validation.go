package spreadreplicas

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
)

// ValidateSpreadReplicasArgs checks the args as they will be used, that is
// after defaulting, and reports every problem with its field path.
func ValidateSpreadReplicasArgs(obj runtime.Object) error {
	args, ok := obj.(*SpreadReplicasArgs)
	if !ok {
		return fmt.Errorf("want args to be of type SpreadReplicasArgs, got %T", obj)
	}
	defaulted := args.DeepCopy()
	SetDefaults_SpreadReplicasArgs(defaulted)
	return validateArgs(nil, defaulted).ToAggregate()
}

func validateArgs(path *field.Path, args *SpreadReplicasArgs) field.ErrorList {
	errs := loadawarebalance.ValidateThresholds(path.Child("highThresholds"), args.HighThresholds)
	if d := args.EvictionCooldown.Duration; d < 0 {
		errs = append(errs, field.Invalid(path.Child("evictionCooldown"), d.String(), "must not be negative"))
	}
	for name, v := range map[string]int32{
		"maxEvictionsPerNode":      *args.MaxEvictionsPerNode,
		"maxEvictionsPerNamespace": *args.MaxEvictionsPerNamespace,
		"maxEvictionsPerCycle":     *args.MaxEvictionsPerCycle,
	} {
		if v < 1 {
			errs = append(errs, field.Invalid(path.Child(name), v, "must be at least 1; use dryRun to stop evictions"))
		}
	}
	if d := args.Window.Duration; d <= 0 {
		errs = append(errs, field.Invalid(path.Child("window"), d.String(), "must be a positive duration such as 5m"))
	}
	if ns := args.Namespaces; ns != nil && len(ns.Include) > 0 && len(ns.Exclude) > 0 {
		errs = append(errs, field.Invalid(path.Child("namespaces"), "include and exclude", "only one of include and exclude may be set"))
	}
	// Map iteration above is random; readers and tests want a stable order.
	slices.SortStableFunc(errs, func(a, b *field.Error) int {
		switch {
		case a.Field < b.Field:
			return -1
		case a.Field > b.Field:
			return 1
		}
		return 0
	})
	return errs
}
