//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.36.3 --output-file zz_generated.deepcopy.go --go-header-file /dev/null .

package balance

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// ResourceThresholds maps a measured resource to a percentage of allocatable.
type ResourceThresholds map[usage.Resource]float64

// +k8s:deepcopy-gen=true

// EvictionArgs are the settings every Ballast balance plugin takes, embedded
// inline in each plugin's args.
type EvictionArgs struct {
	// EvictionCooldown is how long a hot node is guarded by earlier moves:
	// pods of a workload are not evicted from a node over a high threshold
	// that they were moved onto (or whose replacement landed back) within it,
	// nor moved back to a node they were moved off. Defaults to 10m.
	EvictionCooldown *metav1.Duration `json:"evictionCooldown,omitempty"`
	// BalanceCooldown is the same guard for balancing, the moves off a node
	// under every high threshold: within it no such move takes a workload's
	// pod off a node that received a moved pod of that workload, nor sends
	// one back to a node it was moved off, so balancing never undoes an
	// earlier move, and balancing moves a workload off other nodes at most
	// BalanceMoves times. At least EvictionCooldown. Defaults to 1h, or
	// EvictionCooldown when that is longer.
	BalanceCooldown *metav1.Duration `json:"balanceCooldown,omitempty"`
	// MaxEvictionsPerNode caps the plugin's evictions per node and cycle.
	// Defaults to 5.
	MaxEvictionsPerNode *int32 `json:"maxEvictionsPerNode,omitempty"`
	// MaxEvictionsPerNamespace caps the plugin's evictions per namespace and
	// cycle. Defaults to 5.
	MaxEvictionsPerNamespace *int32 `json:"maxEvictionsPerNamespace,omitempty"`
	// MaxEvictionsPerCycle caps the plugin's evictions per cycle. Defaults to 5.
	MaxEvictionsPerCycle *int32 `json:"maxEvictionsPerCycle,omitempty"`
	// Window selects which load-watcher window is read. Defaults to 5m.
	Window *metav1.Duration `json:"window,omitempty"`
	// ThresholdStatistics says, per resource, which number of the window is
	// compared with the thresholds: Average, Latest (newest sample) or P95.
	// Defaults to {cpu: Average, memory: Latest}, as the scheduler's
	// LoadAware, so both call the same node hot.
	ThresholdStatistics loadmodel.Statistics `json:"thresholdStatistics,omitempty"`
	// DryRun logs the evictions the plugin would make instead of making them.
	DryRun bool `json:"dryRun,omitempty"`
	// Namespaces restricts which namespaces pods are moved from; at most one
	// of include and exclude may be set. Defaults to excluding kube-system.
	Namespaces *api.Namespaces `json:"namespaces,omitempty"`
	// SchedulerNames are the spec.schedulerName values of the pods the plugin
	// may evict: the profiles of a Ballast scheduler, which places the
	// replacement by real usage. Other pods are passed over, since another
	// scheduler would place their replacement anywhere, the hot node included.
	// A pod without a schedulerName counts as default-scheduler. An empty list
	// is invalid. Defaults to [ballast-scheduler]; list default-scheduler only
	// where Ballast serves it.
	SchedulerNames []string `json:"schedulerNames,omitempty"`
	// MemoryGrowthPerMinute is how fast a pod's memory must have grown,
	// steadily for ten minutes, for the pod to count as growing (a leak, a
	// cache without a bound). A growing pod heats whatever node it lands on,
	// so it is not moved; Ballast warns about it instead: a Warning event
	// MemoryGrowing on the pod and the metric
	// ballast_descheduler_pod_memory_growth_mib_per_minute. Defaults to
	// 1Mi; 0 turns the detection off.
	MemoryGrowthPerMinute *resource.Quantity `json:"memoryGrowthPerMinute,omitempty"`
}
