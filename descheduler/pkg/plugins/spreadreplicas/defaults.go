package spreadreplicas

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

var (
	defaultHighThresholds           = map[usage.Resource]float64{usage.CPU: 80, usage.Memory: 85}
	defaultEvictionCooldown         = 10 * time.Minute
	defaultMaxEvictionsPerNode      = int32(2)
	defaultMaxEvictionsPerNamespace = int32(5)
	defaultMaxEvictionsPerCycle     = int32(5)
	defaultWindow                   = usage.Window5m.Duration()
	defaultExcludedNamespaces       = []string{metav1.NamespaceSystem}
)

func addDefaultingFuncs(scheme *runtime.Scheme) error {
	scheme.AddTypeDefaultingFunc(&SpreadReplicasArgs{}, func(obj any) { SetDefaults_SpreadReplicasArgs(obj.(*SpreadReplicasArgs)) })
	return nil
}

// SetDefaults_SpreadReplicasArgs fills every unset field with its default.
func SetDefaults_SpreadReplicasArgs(obj runtime.Object) {
	args := obj.(*SpreadReplicasArgs)
	if args.HighThresholds == nil {
		args.HighThresholds = make(loadawarebalance.ResourceThresholds, len(defaultHighThresholds))
		for r, v := range defaultHighThresholds {
			args.HighThresholds[r] = v
		}
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
	if args.Window == nil {
		args.Window = &metav1.Duration{Duration: defaultWindow}
	}
	if args.Namespaces == nil {
		args.Namespaces = &api.Namespaces{Exclude: append([]string(nil), defaultExcludedNamespaces...)}
	}
}

func ptrTo[T any](v T) *T { return &v }
