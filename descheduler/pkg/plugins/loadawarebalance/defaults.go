package loadawarebalance

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

var (
	defaultHighThresholds           = ResourceThresholds{usage.CPU: 80, usage.Memory: 85}
	defaultLowThresholds            = ResourceThresholds{usage.CPU: 50, usage.Memory: 60}
	defaultConsecutiveHotCycles     = int32(1)
	defaultEvictionCooldown         = 10 * time.Minute
	defaultMaxEvictionsPerNode      = int32(2)
	defaultMaxEvictionsPerNamespace = int32(5)
	defaultMaxEvictionsPerCycle     = int32(5)
	defaultWindow                   = usage.Window5m.Duration()
	defaultExcludedNamespaces       = []string{metav1.NamespaceSystem}
	// defaultSchedulerNames is the profile of Ballast's scheduler as a
	// second scheduler, the chart's default.
	defaultSchedulerNames = []string{"ballast-scheduler"}
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	return RegisterDefaults(scheme)
}

// SetDefaults_LoadAwareBalanceArgs fills every unset field with its default.
func SetDefaults_LoadAwareBalanceArgs(obj runtime.Object) {
	args := obj.(*LoadAwareBalanceArgs)
	if args.HighThresholds == nil {
		args.HighThresholds = copyThresholds(defaultHighThresholds)
	}
	if args.LowThresholds == nil {
		args.LowThresholds = copyThresholds(defaultLowThresholds)
	}
	if args.ConsecutiveHotCycles == nil {
		args.ConsecutiveHotCycles = ptrTo(defaultConsecutiveHotCycles)
	}
	if args.EvictionCooldown == nil {
		args.EvictionCooldown = &metav1.Duration{Duration: defaultEvictionCooldown}
	}
	if args.MaxEvictionsPerNode == nil {
		args.MaxEvictionsPerNode = ptrTo(defaultMaxEvictionsPerNode)
	}
	if args.MaxEvictionsPerNamespace == nil {
		args.MaxEvictionsPerNamespace = ptrTo(defaultMaxEvictionsPerNamespace)
	}
	if args.MaxEvictionsPerCycle == nil {
		args.MaxEvictionsPerCycle = ptrTo(defaultMaxEvictionsPerCycle)
	}
	// The scheduler's LoadAware defaults its statistics the same way.
	args.ThresholdStatistics = args.ThresholdStatistics.Complete()
	if args.Window == nil {
		args.Window = &metav1.Duration{Duration: defaultWindow}
	}
	if args.Namespaces == nil {
		args.Namespaces = &api.Namespaces{Exclude: append([]string(nil), defaultExcludedNamespaces...)}
	}
	// Only nil is unset: an empty list is the user's, and validation refuses it.
	if args.SchedulerNames == nil {
		args.SchedulerNames = append([]string(nil), defaultSchedulerNames...)
	}
}

func copyThresholds(in ResourceThresholds) ResourceThresholds {
	out := make(ResourceThresholds, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func ptrTo[T any](v T) *T { return &v }
