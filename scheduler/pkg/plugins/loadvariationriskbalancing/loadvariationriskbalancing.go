// Package loadvariationriskbalancing is the LoadVariationRiskBalancing plugin:
// it scores nodes by a risk that combines the mean and the standard deviation
// of their usage over a window (Trimaran's semantics), so a node whose load
// swings is avoided even when its average looks low. The standard deviation
// comes from load-watcher's windows, so it works with metrics-server too.
package loadvariationriskbalancing

import (
	"context"
	"math"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// Name is the plugin's name in scheduler configurations.
const Name = "LoadVariationRiskBalancing"

var (
	_ fwk.PreScorePlugin    = &LoadVariationRiskBalancing{}
	_ fwk.ScorePlugin       = &LoadVariationRiskBalancing{}
	_ fwk.ReservePlugin     = &LoadVariationRiskBalancing{}
	_ fwk.EnqueueExtensions = &LoadVariationRiskBalancing{}
	_ fwk.SignPlugin        = &LoadVariationRiskBalancing{}
)

// LoadVariationRiskBalancing scores nodes by usage risk.
type LoadVariationRiskBalancing struct {
	handle      fwk.Handle
	tracker     *nodeload.Tracker
	margin      float64
	sensitivity float64
	window      usage.Window
	weights     []loadmodel.ResourceWeight
	resources   []usage.Resource
}

// NewFactory returns the factory kube-scheduler calls for every profile that
// enables the plugin; all instances share tracker.
func NewFactory(tracker *nodeload.Tracker) frameworkruntime.PluginFactory {
	return nodeload.Factory(tracker, New)
}

// New builds the plugin from its args, defaulting and validating them.
func New(_ context.Context, obj runtime.Object, h fwk.Handle, tracker *nodeload.Tracker) (*LoadVariationRiskBalancing, error) {
	args, err := config.DecodeArgs(Name, obj, config.SetDefaults_LoadVariationRiskBalancingArgs, config.ValidateLoadVariationRiskBalancingArgs)
	if err != nil {
		return nil, err
	}
	if err := tracker.Attach(Name, h); err != nil {
		return nil, err
	}
	pl := &LoadVariationRiskBalancing{
		handle:      h,
		tracker:     tracker,
		margin:      *args.SafeVarianceMargin,
		sensitivity: *args.SafeVarianceSensitivity,
		window:      usage.Window(args.Window.Duration),
	}
	for _, r := range args.Resources {
		pl.weights = append(pl.weights, loadmodel.ResourceWeight{Resource: r.Name, Weight: r.Weight})
		pl.resources = append(pl.resources, r.Name)
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *LoadVariationRiskBalancing) Name() string { return Name }

// SignPod lets kube-scheduler batch pods (fwk.SignPlugin): Score depends on
// the pod only through its demand.
func (pl *LoadVariationRiskBalancing) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{pl.tracker.SignEstimate(Name, pod, loadmodel.DefaultEstimateOptions)}, nil
}

// newState takes the cycle's snapshot and the pod's demand, what it adds to
// a node's mean: its running siblings' measured usage when known, else its
// requests, as in Trimaran, with LoadAware's defaults for containers that
// request nothing so that best-effort pods are not free.
func (pl *LoadVariationRiskBalancing) newState(ctx context.Context, pod *v1.Pod) *nodeload.Cycle {
	return pl.tracker.NewCycle(ctx, Name, pod, pl.window, loadmodel.DefaultEstimateOptions)
}

// PreScore takes the cycle's usage snapshot and reports nodes without usage.
func (pl *LoadVariationRiskBalancing) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	s := pl.newState(ctx, pod)
	nodeload.WriteCycle(cs, Name, s)
	pl.tracker.Report(ctx, pl.handle, Name, pod, pl.tracker.Unavailable(s.Snap, nodes, pl.window, pl.resources...))
	return nil
}

// Score returns 100 × (1 − risk), combining resources by weight; a node
// without usable usage gets the neutral score.
func (pl *LoadVariationRiskBalancing) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s, ok := nodeload.ReadCycle(cs, Name)
	if !ok {
		s = pl.newState(ctx, pod)
	}
	node := nodeInfo.Node().Name
	v, ok := s.Views.Node(node)
	if !ok || v.Cause(pl.resources...) != nodeload.CauseNone {
		return nodeload.NeutralScore, nil
	}
	added := s.PodEst.Add(pl.tracker.Pending().SumAt(s.Now, node, v.SampleTime, pl.window.Duration(), loadmodel.DefaultEstimateOptions))
	alloc := nodeload.Allocatable(nodeInfo)
	logger := klog.FromContext(ctx)
	verbose := logger.V(4).Enabled()
	var sum, total float64
	for _, w := range pl.weights {
		st, _ := v.Stats(w.Resource)
		in := loadmodel.RiskInput{Avg: st.Avg, Std: st.Std, Added: loadmodel.Percent(added.Of(w.Resource), alloc.Of(w.Resource))}
		risk := loadmodel.Risk(in, pl.margin, pl.sensitivity)
		sum += float64(w.Weight) * loadmodel.RiskScore(risk)
		total += float64(w.Weight)
		if verbose {
			logger.V(4).Info("Risk score", "plugin", Name, "pod", klog.KObj(pod), "node", node, "resource", w.Resource,
				"avg", in.Avg, "std", in.Std, "added", in.Added, "risk", risk)
		}
	}
	score := int64(math.Round(sum / total))
	if verbose {
		logger.V(4).Info("Risk-balancing score", "plugin", Name, "pod", klog.KObj(pod), "node", node, "score", score)
	}
	return score, nil
}

// ScoreExtensions returns nil: scores are already between 0 and 100.
func (pl *LoadVariationRiskBalancing) ScoreExtensions() fwk.ScoreExtensions { return nil }

// EventsToRegister returns no events: the plugin only scores and never
// makes a pod unschedulable, so no event needs to requeue one for it.
func (pl *LoadVariationRiskBalancing) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return nil, nil
}

// Reserve counts the pod on its node at once (anti-herding).
func (pl *LoadVariationRiskBalancing) Reserve(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	pl.tracker.Reserve(ctx, pod, node)
	return nil
}

// Unreserve forgets the pod when its placement is abandoned.
func (pl *LoadVariationRiskBalancing) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	pl.tracker.Unreserve(pod)
}
