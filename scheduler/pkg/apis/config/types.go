package config

// Regenerate zz_generated.deepcopy.go after changing a type:
//go:generate go run k8s.io/code-generator/cmd/deepcopy-gen@v0.36.3 --output-file zz_generated.deepcopy.go --go-header-file /dev/null .

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// The types of the scheduling model live in loadmodel, where the
// descheduler reads them too; these names keep the scheduler's API whole.
type (
	// ScoringStrategyType names how LoadAware turns predicted usage into a score.
	ScoringStrategyType = loadmodel.ScoringStrategyType
	// ResourceSpec is a resource taking part in a score, with its weight.
	ResourceSpec = loadmodel.ResourceSpec
	// ScoringStrategy configures LoadAware's Score.
	ScoringStrategy = loadmodel.ScoringStrategy
	// PodEstimate says how to guess the usage of a pod before it is measured.
	PodEstimate = loadmodel.PodEstimate
)

const (
	// LeastLoaded prefers the node with the lowest predicted usage (spreading).
	LeastLoaded = loadmodel.StrategyLeastLoaded
	// TargetPacking fills nodes up to a target utilisation, then prefers the
	// least loaded (Trimaran's TargetLoadPacking).
	TargetPacking = loadmodel.StrategyTargetPacking
)

// VariationRiskTerm makes LoadVariationRiskBalancing's score a term of
// LoadAware's score, computed from the same per-node figures as LoadAware's
// Filter and Score: the node's usage in the window and the pods bound since
// its sample, plus the pod, estimated as LoadAware estimates it
// (podEstimate).
type VariationRiskTerm struct {
	// Weight is the term's weight among LoadAware's score terms; 1–100.
	// Defaults to 1.
	Weight int64 `json:"weight,omitempty"`
	// SafeVarianceMargin multiplies the standard deviation; 0 ignores
	// variation. Defaults to 1.
	SafeVarianceMargin *float64 `json:"safeVarianceMargin,omitempty"`
	// SafeVarianceSensitivity is the root applied to the (fractional)
	// standard deviation; above 1 small variations weigh more. Defaults to 1.
	SafeVarianceSensitivity *float64 `json:"safeVarianceSensitivity,omitempty"`
	// Window is the load-watcher window whose mean and standard deviation are
	// used. Defaults to 15m.
	Window *metav1.Duration `json:"window,omitempty"`
	// Resources are the resources scored, with their weights. Defaults to
	// cpu and memory, weight 1 each.
	Resources []ResourceSpec `json:"resources,omitempty"`
}

// PodCountBalanceTerm makes PodCountBalance's score, the free pod slots, a
// term of LoadAware's score.
type PodCountBalanceTerm struct {
	// Weight is the term's weight among LoadAware's score terms; 1–100.
	// Defaults to 1.
	Weight int64 `json:"weight,omitempty"`
}

// ScoreCombination names how per-resource scores make a node score
// (loadmodel.Combination); the descheduler's model uses the default.
type ScoreCombination = loadmodel.Combination

const (
	// Bottleneck scores a node by its worst resource.
	Bottleneck = loadmodel.Bottleneck
	// WeightedMean scores a node by the weighted mean of its resources.
	WeightedMean = loadmodel.WeightedMean
)

// UsageStatistic names which number of a load-watcher window stands for a
// node's usage; the descheduler reads the same (loadmodel.Statistic).
type UsageStatistic = loadmodel.Statistic

const (
	// Average is the window's mean.
	Average = loadmodel.Average
	// Latest is the window's newest sample.
	Latest = loadmodel.Latest
	// P95 is the window's 95th percentile.
	P95 = loadmodel.P95
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadAwareArgs are the arguments of the LoadAware plugin.
type LoadAwareArgs struct {
	metav1.TypeMeta `json:",inline"`

	// Settings are the scheduling model the descheduler predicts as well:
	// thresholds, thresholdStatistics, scoringStrategy, window and
	// podEstimate (loadmodel.Settings documents each and its default).
	loadmodel.Settings `json:",inline"`
	// FilterCriticalPods makes Filter apply the thresholds to pods of the
	// system-node-critical and system-cluster-critical priority classes too.
	// Off by default: CoreDNS, metrics-server or a CNI controller that cannot
	// be placed because every node is busy is worse than a busier node.
	FilterCriticalPods bool `json:"filterCriticalPods,omitempty"`
	// VariationRisk, when set, adds the variation risk of
	// LoadVariationRiskBalancing to LoadAware's score as a weighted term:
	// the score is the weighted mean of its terms, and one plugin scores
	// what two did. Unset: LoadAware does not score the risk.
	VariationRisk *VariationRiskTerm `json:"variationRisk,omitempty"`
	// PodCountBalance, when set, adds the free pod slots of PodCountBalance
	// to LoadAware's score as a weighted term. Unset: LoadAware does not
	// score them.
	PodCountBalance *PodCountBalanceTerm `json:"podCountBalance,omitempty"`
	// PlacementEvents records an Event (reason LoadAwarePlaced) on a pod
	// whose placement its load shaped — LoadAware rejected a node for its
	// usage — with the figures it was placed by (the node's measured usage,
	// pods bound since, the pod's estimate, against the thresholds), its
	// score term by term, and the nodes rejected with why. `kubectl
	// describe pod` and `ballast explain pod` show it. Defaults to true.
	PlacementEvents *bool `json:"placementEvents,omitempty"`
	// PlannedMoves, when set, names the ConfigMap the descheduler keeps
	// its moves in: for a new pod of a workload the descheduler just moved
	// a pod of, LoadAware scores the node the move planned highest, as
	// long as the node's usage still takes the pod, so the replacement
	// lands where the descheduler expected it. Unset: moves are not read.
	PlannedMoves *PlannedMoves `json:"plannedMoves,omitempty"`
}

// PlannedMoves names where the descheduler keeps its moves, and how long
// LoadAware favours a move's destination.
type PlannedMoves struct {
	// Namespace and Name name the ConfigMap (the chart's
	// <release>-descheduler-moves). Required.
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// ValidFor is how long after a move LoadAware favours its destination
	// for the workload's new pods, until the descheduler sees the
	// replacement run; 1s–1h. Defaults to 5m, one descheduling interval.
	ValidFor *metav1.Duration `json:"validFor,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// LoadVariationRiskBalancingArgs are the arguments of the
// LoadVariationRiskBalancing plugin.
type LoadVariationRiskBalancingArgs struct {
	metav1.TypeMeta `json:",inline"`

	// SafeVarianceMargin multiplies the standard deviation; 0 ignores
	// variation. Defaults to 1.
	SafeVarianceMargin *float64 `json:"safeVarianceMargin,omitempty"`
	// SafeVarianceSensitivity is the root applied to the (fractional)
	// standard deviation; above 1 small variations weigh more. Defaults to 1.
	SafeVarianceSensitivity *float64 `json:"safeVarianceSensitivity,omitempty"`
	// Window is the load-watcher window whose mean and standard deviation are
	// used. Defaults to 15m.
	Window *metav1.Duration `json:"window,omitempty"`
	// Resources are the resources scored, with their weights. Defaults to
	// cpu and memory, weight 1 each.
	Resources []ResourceSpec `json:"resources,omitempty"`
	// Combine is how the resources' scores make the node's: Bottleneck (the
	// lowest, the default) or WeightedMean (weighted by Resources). Weights
	// apply only to WeightedMean, so Bottleneck asks for equal weights.
	Combine ScoreCombination `json:"combine,omitempty"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// UsageAwareFitArgs are the arguments of the UsageAwareFit plugin.
type UsageAwareFitArgs struct {
	metav1.TypeMeta `json:",inline"`

	// MaxOvercommit bounds the requests admitted on a node, as a multiple of
	// its allocatable, per resource (1 means no overcommit). Resources not
	// listed are never overcommitted. Defaults to {cpu: 1.5, memory: 1.2}.
	MaxOvercommit map[usage.Resource]float64 `json:"maxOvercommit,omitempty"`
	// MaxUsage is the predicted usage, in percent of allocatable, that a node
	// must stay at or below (judged on the window's 95th percentile) for a
	// pod to be admitted beyond requests. Defaults to {cpu: 80, memory: 80}.
	MaxUsage map[usage.Resource]float64 `json:"maxUsage,omitempty"`
	// Window is the load-watcher window used. Defaults to 5m.
	Window *metav1.Duration `json:"window,omitempty"`
	// PodEstimate configures the estimate of the pod being placed.
	PodEstimate *PodEstimate `json:"podEstimate,omitempty"`
}
