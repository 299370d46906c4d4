package loadawarebalance

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

var (
	defaultLowThresholds        = balance.ResourceThresholds{usage.CPU: 50, usage.Memory: 60}
	defaultConsecutiveHotCycles = int32(1)
	// defaultPlanMargin: two points of spread is below what a cycle's
	// window moves a node's utilisation by noise alone on a homelab's
	// workloads, and above what one more restart buys.
	defaultPlanMargin = 2.0
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_LoadAwareBalanceArgs fills every unset field with its default.
func SetDefaults_LoadAwareBalanceArgs(obj runtime.Object) {
	args := obj.(*LoadAwareBalanceArgs)
	if args.HighThresholds == nil {
		args.HighThresholds = balance.CopyThresholds(balance.DefaultHighThresholds)
	}
	if args.LowThresholds == nil {
		args.LowThresholds = balance.CopyThresholds(defaultLowThresholds)
	}
	if args.ConsecutiveHotCycles == nil {
		v := defaultConsecutiveHotCycles
		args.ConsecutiveHotCycles = &v
	}
	if args.PlanMargin == nil {
		v := defaultPlanMargin
		args.PlanMargin = &v
	}
	if args.SurgeSingleReplica == nil {
		args.SurgeSingleReplica = new(bool)
	}
	balance.SetDefaults_EvictionArgs(&args.EvictionArgs)
}
