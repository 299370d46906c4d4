package spreadreplicas

import (
	"k8s.io/apimachinery/pkg/runtime"

	lab "github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	scheme.AddTypeDefaultingFunc(&SpreadReplicasArgs{}, func(obj any) { SetDefaults_SpreadReplicasArgs(obj.(*SpreadReplicasArgs)) })
	return nil
}

// SetDefaults_SpreadReplicasArgs fills every unset field with its default:
// the fields both balance plugins take default as LoadAwareBalance's do, so
// the two cannot drift apart.
func SetDefaults_SpreadReplicasArgs(obj runtime.Object) {
	args := obj.(*SpreadReplicasArgs)
	shared := &lab.LoadAwareBalanceArgs{
		HighThresholds: args.HighThresholds, EvictionCooldown: args.EvictionCooldown, Window: args.Window,
		MaxEvictionsPerNode: args.MaxEvictionsPerNode, MaxEvictionsPerNamespace: args.MaxEvictionsPerNamespace,
		MaxEvictionsPerCycle: args.MaxEvictionsPerCycle, Namespaces: args.Namespaces,
		SchedulerNames: args.SchedulerNames, ThresholdStatistics: args.ThresholdStatistics,
	}
	lab.SetDefaults_LoadAwareBalanceArgs(shared)
	args.HighThresholds, args.EvictionCooldown, args.Window = shared.HighThresholds, shared.EvictionCooldown, shared.Window
	args.MaxEvictionsPerNode, args.MaxEvictionsPerNamespace = shared.MaxEvictionsPerNode, shared.MaxEvictionsPerNamespace
	args.MaxEvictionsPerCycle, args.Namespaces = shared.MaxEvictionsPerCycle, shared.Namespaces
	args.SchedulerNames, args.ThresholdStatistics = shared.SchedulerNames, shared.ThresholdStatistics
}

func ptrTo[T any](v T) *T { return &v }
