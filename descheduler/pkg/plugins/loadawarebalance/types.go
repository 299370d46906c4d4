//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.36.3 --output-file zz_generated.deepcopy.go --go-header-file /dev/null .

package loadawarebalance

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadAwareBalanceArgs configures the LoadAwareBalance plugin.
type LoadAwareBalanceArgs struct {
	metav1.TypeMeta `json:",inline"`

	// HighThresholds: a node using more than any of these percentages of its
	// allocatable is hot. Defaults to {cpu: 80, memory: 85}.
	HighThresholds balance.ResourceThresholds `json:"highThresholds,omitempty"`
	// LowThresholds: a node using less than all of these percentages is cool
	// and may receive moved pods. Defaults to {cpu: 50, memory: 60}.
	LowThresholds balance.ResourceThresholds `json:"lowThresholds,omitempty"`
	// DeviationThresholds: a node using more than the cluster's mean usage
	// of a resource plus this many percentage points counts as hot too, even
	// under HighThresholds; its pods move to nodes below the mean (and cool)
	// until it is back within the deviation, and no destination of such a
	// move is pushed past it (a pod moved off a node over HighThresholds may
	// take its destination up to HighThresholds). Pods placed in a burst,
	// when nothing was known of their real usage, end up on the nodes that
	// can hold them. Unset moves pods off nodes above HighThresholds only.
	DeviationThresholds balance.ResourceThresholds `json:"deviationThresholds,omitempty"`
	// ConsecutiveHotCycles is how many descheduling cycles in a row a node
	// must be above a high threshold before it counts as hot. Defaults to 1:
	// hot is judged on the window's statistics (thresholdStatistics), and
	// the average already ignores spikes shorter than the window.
	ConsecutiveHotCycles *int32 `json:"consecutiveHotCycles,omitempty"`
	// PlanMargin is how far, in points of utilisation spread (the busiest
	// node's utilisation less the idlest's, utilisation being the mean of
	// the DeviationThresholds' resources in percent), the cluster may be
	// above the best placement the descheduler finds before it plans moves,
	// and how near that placement a plan takes it. Larger: fewer restarts
	// for a less even cluster; 0 plans whenever any move makes the cluster
	// more even. Defaults to 2. Unused without DeviationThresholds.
	PlanMargin *float64 `json:"planMargin,omitempty"`
	// SurgeSingleReplica moves the pod of a one-replica Deployment by
	// rolling the Deployment out (its pod template gets the annotation
	// ballast-sched.io/moved-at), so that the replacement runs and is Ready
	// before the pod stops, instead of evicting it and leaving the workload
	// down until the replacement is Ready. Only where the Deployment's
	// rolling update adds a pod before removing one and the pod mounts no
	// volume claim; other pods are evicted. Defaults to false: the rollout
	// changes the Deployment, which a GitOps tool that reverts drift would
	// undo, rolling the pod out again.
	SurgeSingleReplica *bool `json:"surgeSingleReplica,omitempty"`
	// EvictionArgs are the settings both balance plugins take: cooldown,
	// limits, window, statistics, dry run, namespaces and scheduler names.
	balance.EvictionArgs `json:",inline"`
}
