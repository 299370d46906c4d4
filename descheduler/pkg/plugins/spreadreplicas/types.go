//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.36.3 --output-file zz_generated.deepcopy.go --go-header-file /dev/null .

package spreadreplicas

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/load-watcher/pkg/loadscore"
)

// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// SpreadReplicasArgs configures the SpreadReplicas plugin.
type SpreadReplicasArgs struct {
	metav1.TypeMeta `json:",inline"`

	// HighThresholds: a node using more than any of these percentages of its
	// allocatable, or that would with the moved pod, receives no replica.
	// Defaults to {cpu: 80, memory: 85}, as LoadAwareBalance.
	HighThresholds loadawarebalance.ResourceThresholds `json:"highThresholds,omitempty"`
	// EvictionCooldown is how long a move is remembered: a workload is not
	// sent back to a node it was moved off, and not moved off a node again
	// once a replacement landed back there. Defaults to 10m.
	EvictionCooldown *metav1.Duration `json:"evictionCooldown,omitempty"`
	// MaxEvictionsPerNode caps this plugin's evictions per node and cycle.
	// Defaults to 2.
	MaxEvictionsPerNode *int32 `json:"maxEvictionsPerNode,omitempty"`
	// MaxEvictionsPerNamespace caps this plugin's evictions per namespace and
	// cycle. Defaults to 5.
	MaxEvictionsPerNamespace *int32 `json:"maxEvictionsPerNamespace,omitempty"`
	// MaxEvictionsPerCycle caps this plugin's evictions per cycle. Defaults to 5.
	MaxEvictionsPerCycle *int32 `json:"maxEvictionsPerCycle,omitempty"`
	// Window selects which load-watcher window is read.
	// Defaults to 5m.
	Window *metav1.Duration `json:"window,omitempty"`
	// ThresholdStatistics says, per resource, which number of the window is
	// compared with the high thresholds: Average, Latest (newest sample) or P95.
	// Defaults to {cpu: Average, memory: Latest}, as the scheduler's
	// LoadAware, so both call the same node hot.
	ThresholdStatistics loadscore.Statistics `json:"thresholdStatistics,omitempty"`
	// DryRun logs the evictions the plugin would make instead of making them.
	DryRun bool `json:"dryRun,omitempty"`
	// Namespaces restricts which namespaces pods are moved from; at most one
	// of include and exclude may be set. Defaults to excluding kube-system.
	Namespaces *api.Namespaces `json:"namespaces,omitempty"`
	// SchedulerNames are the spec.schedulerName values of the replicas the
	// plugin may move, as LoadAwareBalance's: other replicas still count on
	// their node but are never evicted. A pod without a schedulerName counts
	// as default-scheduler. An empty list is invalid. Defaults to
	// [ballast-scheduler].
	SchedulerNames []string `json:"schedulerNames,omitempty"`
}
