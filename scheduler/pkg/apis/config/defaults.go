package config

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// Defaults, as documented on the argument types.
const (
	DefaultCPUThreshold        = loadmodel.DefaultCPUThreshold
	DefaultMemoryThreshold     = loadmodel.DefaultMemoryThreshold
	DefaultTargetUtilization   = loadmodel.DefaultTargetUtilization
	DefaultLoadAwareWindow     = loadmodel.DefaultWindow
	DefaultRequestMultiplier   = loadmodel.DefaultRequestMultiplier
	DefaultRiskWindow          = 15 * time.Minute
	DefaultSafeVarianceMargin  = 1.0
	DefaultSafeVarianceSens    = 1.0
	DefaultCPUOvercommit       = 1.5
	DefaultMemoryOvercommit    = 1.2
	DefaultOvercommitMaxUsage  = 80.0
	DefaultUsageAwareFitWindow = 5 * time.Minute
	// DefaultTermWeight is the weight of each term of LoadAware's score.
	DefaultTermWeight = loadmodel.DefaultTermWeight
	// DefaultPlannedMovesValidFor is how long a move's destination is
	// favoured: one descheduling interval, after which the descheduler
	// has seen where the replacement runs.
	DefaultPlannedMovesValidFor = 5 * time.Minute
	// MaxPlannedMovesValidFor bounds it: past an hour the cluster a move
	// was planned for has gone.
	MaxPlannedMovesValidFor = time.Hour
)

// Default per-container estimates for containers without requests or limits.
var (
	DefaultEstimateCPU    = loadmodel.DefaultEstimateCPU
	DefaultEstimateMemory = loadmodel.DefaultEstimateMemory
)

func defaultResources() []ResourceSpec { return loadmodel.DefaultResources() }

// SetDefaults_LoadAwareArgs fills the unset fields of args.
func SetDefaults_LoadAwareArgs(args *LoadAwareArgs) {
	args.Settings.SetDefaults()
	if t := args.VariationRisk; t != nil {
		if t.Weight == 0 {
			t.Weight = DefaultTermWeight
		}
		s := t.Settings()
		SetDefaults_LoadVariationRiskBalancingArgs(&s)
		t.SafeVarianceMargin, t.SafeVarianceSensitivity, t.Window, t.Resources = s.SafeVarianceMargin, s.SafeVarianceSensitivity, s.Window, s.Resources
	}
	if t := args.PodCountBalance; t != nil && t.Weight == 0 {
		t.Weight = DefaultTermWeight
	}
	if args.PlacementEvents == nil {
		on := true
		args.PlacementEvents = &on
	}
	if m := args.PlannedMoves; m != nil && m.ValidFor == nil {
		m.ValidFor = &metav1.Duration{Duration: DefaultPlannedMovesValidFor}
	}
}

// Settings returns the term's risk settings as LoadVariationRiskBalancing's
// args, sharing their pointers and slice.
func (t *VariationRiskTerm) Settings() LoadVariationRiskBalancingArgs {
	return LoadVariationRiskBalancingArgs{
		SafeVarianceMargin:      t.SafeVarianceMargin,
		SafeVarianceSensitivity: t.SafeVarianceSensitivity,
		Window:                  t.Window,
		Resources:               t.Resources,
	}
}

// SetDefaults_LoadVariationRiskBalancingArgs fills the unset fields of args.
func SetDefaults_LoadVariationRiskBalancingArgs(args *LoadVariationRiskBalancingArgs) {
	if args.SafeVarianceMargin == nil {
		args.SafeVarianceMargin = ptr.To(DefaultSafeVarianceMargin)
	}
	if args.SafeVarianceSensitivity == nil {
		args.SafeVarianceSensitivity = ptr.To(DefaultSafeVarianceSens)
	}
	if args.Window == nil {
		args.Window = &metav1.Duration{Duration: DefaultRiskWindow}
	}
	if len(args.Resources) == 0 {
		args.Resources = defaultResources()
	}
}

// SetDefaults_UsageAwareFitArgs fills the unset fields of args.
func SetDefaults_UsageAwareFitArgs(args *UsageAwareFitArgs) {
	if args.MaxOvercommit == nil {
		args.MaxOvercommit = map[usage.Resource]float64{usage.CPU: DefaultCPUOvercommit, usage.Memory: DefaultMemoryOvercommit}
	}
	if args.MaxUsage == nil {
		args.MaxUsage = map[usage.Resource]float64{usage.CPU: DefaultOvercommitMaxUsage, usage.Memory: DefaultOvercommitMaxUsage}
	}
	if args.Window == nil {
		args.Window = &metav1.Duration{Duration: DefaultUsageAwareFitWindow}
	}
	if args.PodEstimate == nil {
		args.PodEstimate = &PodEstimate{}
	}
	args.PodEstimate.SetDefaults()
}
