package loadawarebalance

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

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
	errs = append(errs, balance.ValidateThresholds(highPath, args.HighThresholds)...)
	errs = append(errs, balance.ValidateThresholds(lowPath, args.LowThresholds)...)
	for _, r := range slices.Sorted(maps.Keys(args.LowThresholds)) {
		low := args.LowThresholds[r]
		if high, ok := args.HighThresholds[r]; ok && low >= high {
			errs = append(errs, field.Invalid(lowPath.Key(string(r)), low,
				fmt.Sprintf("must be below highThresholds[%s] (%v)", r, high)))
		}
	}
	if len(args.DeviationThresholds) > 0 {
		errs = append(errs, balance.ValidateThresholds(path.Child("deviationThresholds"), args.DeviationThresholds)...)
	}
	if v := *args.ConsecutiveHotCycles; v < 1 {
		errs = append(errs, field.Invalid(path.Child("consecutiveHotCycles"), v, "must be at least 1"))
	}
	if v := *args.PlanMargin; math.IsNaN(v) || v < 0 || v > 100 {
		errs = append(errs, field.Invalid(path.Child("planMargin"), v, "must be between 0 and 100 points of utilisation spread"))
	}
	errs = append(errs, balance.ValidateEvictionArgs(path, &args.EvictionArgs)...)
	return balance.SortByField(errs)
}
