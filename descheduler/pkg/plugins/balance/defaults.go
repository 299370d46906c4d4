package balance

import (
	"maps"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/core/usage"
)

var (
	// DefaultHighThresholds are the high thresholds of every balance plugin.
	DefaultHighThresholds = ResourceThresholds{usage.CPU: 80, usage.Memory: 85}

	defaultEvictionCooldown         = 10 * time.Minute
	defaultBalanceCooldown          = time.Hour
	defaultMaxEvictionsPerNode      = int32(5)
	defaultMaxEvictionsPerNamespace = int32(5)
	defaultMaxEvictionsPerCycle     = int32(5)
	defaultWindow                   = usage.Window5m.Duration()
	defaultExcludedNamespaces       = []string{metav1.NamespaceSystem}
	// defaultSchedulerNames is the profile of Ballast's scheduler as a
	// second scheduler, the chart's default.
	defaultSchedulerNames = []string{"ballast-scheduler"}
	// defaultMemoryGrowthPerMinute: 1 MiB a minute is 1.4 GiB a day, a Pi's
	// spare memory.
	defaultMemoryGrowthPerMinute = resource.MustParse("1Mi")
)

// SetDefaults_EvictionArgs fills every unset field of a with its default.
func SetDefaults_EvictionArgs(a *EvictionArgs) {
	if a.EvictionCooldown == nil {
		a.EvictionCooldown = &metav1.Duration{Duration: defaultEvictionCooldown}
	}
	if a.BalanceCooldown == nil {
		a.BalanceCooldown = &metav1.Duration{Duration: max(defaultBalanceCooldown, a.EvictionCooldown.Duration)}
	}
	if a.MaxEvictionsPerNode == nil {
		a.MaxEvictionsPerNode = ptrTo(defaultMaxEvictionsPerNode)
	}
	if a.MaxEvictionsPerNamespace == nil {
		a.MaxEvictionsPerNamespace = ptrTo(defaultMaxEvictionsPerNamespace)
	}
	if a.MaxEvictionsPerCycle == nil {
		a.MaxEvictionsPerCycle = ptrTo(defaultMaxEvictionsPerCycle)
	}
	if a.Window == nil {
		a.Window = &metav1.Duration{Duration: defaultWindow}
	}
	// The scheduler's LoadAware defaults its statistics the same way.
	a.ThresholdStatistics = a.ThresholdStatistics.Complete()
	if a.Namespaces == nil {
		a.Namespaces = &api.Namespaces{Exclude: append([]string(nil), defaultExcludedNamespaces...)}
	}
	// Only nil is unset: an empty list is the user's, and validation refuses it.
	if a.SchedulerNames == nil {
		a.SchedulerNames = append([]string(nil), defaultSchedulerNames...)
	}
	if a.MemoryGrowthPerMinute == nil {
		q := defaultMemoryGrowthPerMinute.DeepCopy()
		a.MemoryGrowthPerMinute = &q
	}
}

// CopyThresholds returns a copy of t, so that defaults are never shared.
func CopyThresholds(t ResourceThresholds) ResourceThresholds {
	return maps.Clone(t)
}

func ptrTo[T any](v T) *T { return &v }
