//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.36.3 --output-file zz_generated.deepcopy.go --go-header-file /dev/null .

package spreadreplicas

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// +k8s:deepcopy-gen=true
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// SpreadReplicasArgs configures the SpreadReplicas plugin.
type SpreadReplicasArgs struct {
	metav1.TypeMeta `json:",inline"`

	// HighThresholds: a node using more than any of these percentages of its
	// allocatable, or that would with the moved pod, receives no replica.
	// Defaults to {cpu: 80, memory: 85}, as LoadAwareBalance.
	HighThresholds balance.ResourceThresholds `json:"highThresholds,omitempty"`
	// EvictionArgs are the settings both balance plugins take, with the same
	// defaults as LoadAwareBalance's: cooldown, limits, window, statistics,
	// dry run, namespaces and scheduler names. Other replicas still count on
	// their node but are never evicted.
	balance.EvictionArgs `json:",inline"`
}
