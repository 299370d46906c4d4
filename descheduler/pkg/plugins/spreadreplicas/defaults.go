package spreadreplicas

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	scheme.AddTypeDefaultingFunc(&SpreadReplicasArgs{}, func(obj any) { SetDefaults_SpreadReplicasArgs(obj.(*SpreadReplicasArgs)) })
	return nil
}

// SetDefaults_SpreadReplicasArgs fills every unset field with its default:
// the settings both balance plugins take default in one place
// (balance.SetDefaults_EvictionArgs), so the two cannot drift apart.
func SetDefaults_SpreadReplicasArgs(obj runtime.Object) {
	args := obj.(*SpreadReplicasArgs)
	if args.HighThresholds == nil {
		args.HighThresholds = balance.CopyThresholds(balance.DefaultHighThresholds)
	}
	balance.SetDefaults_EvictionArgs(&args.EvictionArgs)
}

func ptrTo[T any](v T) *T { return &v }
