package spreadreplicas

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
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
	errs := balance.ValidateThresholds(path.Child("highThresholds"), args.HighThresholds)
	errs = append(errs, balance.ValidateEvictionArgs(path, &args.EvictionArgs)...)
	return balance.SortByField(errs)
}
