// Package loadvariationriskbalancing is the LoadVariationRiskBalancing plugin:
// it scores nodes by a risk that combines the mean and the standard deviation
// of their usage over a window (Trimaran's semantics), so a node whose load
// swings is avoided even when its average looks low. The standard deviation
// comes from load-watcher's windows, so it works with metrics-server too.
//
// LoadAware scores the same risk as a term of its own score (its args'
// variationRisk) with Scorer, which is the cheaper way to run both: one
// plugin, one pass over the nodes. The plugin stays for configurations that
// name it.
package loadvariationriskbalancing

import (
	"context"
	"math"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/pluginargs"
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

// Scorer rates nodes by their usage risk: the plugin's Score, and the
// variationRisk term of LoadAware's.
type Scorer struct {
	margin      float64
	sensitivity float64
	window      usage.Window
	weights     []loadmodel.ResourceWeight
	resources   []usage.Resource
	// at is each weighted resource's place in usage.Resources.
	at []int
	// sigmas hold the variation half of each node's risk in the newest
	// table (loadmodel.RiskSigma), which depends on the node's sample
	// alone.
	sigmas atomic.Pointer[sigmas]
}

type sigmas struct {
	table *nodeload.Table
	// sigma is per node, then per weighted resource.
	sigma [][2]float64
}

// NewScorer builds a Scorer from defaulted and validated args.
func NewScorer(args *config.LoadVariationRiskBalancingArgs) *Scorer {
	s := &Scorer{
		margin:      *args.SafeVarianceMargin,
		sensitivity: *args.SafeVarianceSensitivity,
		window:      usage.Window(args.Window.Duration),
	}
	for _, r := range args.Resources {
		s.weights = append(s.weights, loadmodel.ResourceWeight{Resource: r.Name, Weight: r.Weight})
		s.resources = append(s.resources, r.Name)
		s.at = append(s.at, nodeload.ResourceIndex(r.Name))
	}
	return s
}

// Window is the window whose mean and standard deviation the risk reads.
func (s *Scorer) Window() usage.Window { return s.window }

// Resources are the resources scored.
func (s *Scorer) Resources() []usage.Resource { return s.resources }

// Prepare works out the variation half of every node's risk in table,
// once per table (that is, per usage snapshot).
func (s *Scorer) Prepare(table *nodeload.Table) {
	if c := s.sigmas.Load(); c != nil && c.table == table {
		return
	}
	c := &sigmas{table: table, sigma: make([][2]float64, table.Len())}
	for i := range c.sigma {
		e := table.Usage(i)
		if e.Cause(s.resources...) != nodeload.CauseNone {
			continue
		}
		for j, at := range s.at {
			_, std := e.MeanAndStd(at)
			c.sigma[i][j] = loadmodel.RiskSigma(std, s.margin, s.sensitivity)
		}
	}
	s.sigmas.Store(c)
}

// Score returns 100 × (1 − risk) of the node of e, at place i of table (-1
// when it has none), combining resources by weight, where each resource's
// risk takes the node's mean and standard deviation and adds the pending
// pods (e.Pending) and the pod (pod) to the mean, against the node's
// allocatable alloc. ok is false, and the score neutral, when the node's
// usage cannot be used. logger, when enabled, receives each resource's
// figures.
func (s *Scorer) Score(table *nodeload.Table, i int, e *nodeload.NodeEntry, pod, alloc loadmodel.Amount, logger klog.Logger) (score float64, ok bool) {
	if e.Cause(s.resources...) != nodeload.CauseNone {
		return nodeload.NeutralScore, false
	}
	var sigma *[2]float64
	if c := s.sigmas.Load(); c != nil && c.table == table && i >= 0 {
		sigma = &c.sigma[i]
	}
	added := pod.Add(e.Pending)
	var sum, total float64
	for j, w := range s.weights {
		avg, std := e.MeanAndStd(s.at[j])
		addedPercent := loadmodel.Percent(added.Of(w.Resource), alloc.Of(w.Resource))
		var sg float64
		if sigma != nil {
			sg = sigma[j]
		} else {
			sg = loadmodel.RiskSigma(std, s.margin, s.sensitivity)
		}
		risk := loadmodel.RiskOf(avg, addedPercent, sg)
		sum += float64(w.Weight) * loadmodel.RiskScore(risk)
		total += float64(w.Weight)
		if logger.Enabled() {
			logger.Info("Risk score", "node", e.Name, "resource", w.Resource, "avg", avg, "std", std, "added", addedPercent, "risk", risk)
		}
	}
	return sum / total, true
}

// LoadVariationRiskBalancing scores nodes by usage risk.
type LoadVariationRiskBalancing struct {
	handle  fwk.Handle
	tracker *nodeload.Tracker
	scorer  *Scorer
}

// NewFactory returns the factory kube-scheduler calls for every profile that
// enables the plugin; all instances share tracker.
func NewFactory(tracker *nodeload.Tracker) frameworkruntime.PluginFactory {
	return nodeload.Factory(tracker, New)
}

// New builds the plugin from its args, defaulting and validating them.
func New(_ context.Context, obj runtime.Object, h fwk.Handle, tracker *nodeload.Tracker) (*LoadVariationRiskBalancing, error) {
	args, err := pluginargs.Decode(Name, obj, config.SetDefaults_LoadVariationRiskBalancingArgs, config.ValidateLoadVariationRiskBalancingArgs)
	if err != nil {
		return nil, err
	}
	if err := tracker.Attach(Name, h); err != nil {
		return nil, err
	}
	return &LoadVariationRiskBalancing{handle: h, tracker: tracker, scorer: NewScorer(args)}, nil
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
func (pl *LoadVariationRiskBalancing) newState(ctx context.Context, pod *v1.Pod, nodes []fwk.NodeInfo) *nodeload.Cycle {
	return pl.tracker.NewCycle(ctx, Name, pod, nodeload.AllNodes(pl.handle, nodes), pl.scorer.window, loadmodel.DefaultEstimateOptions)
}

// PreScore takes the cycle's usage snapshot and reports nodes without usage.
func (pl *LoadVariationRiskBalancing) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	s := pl.newState(ctx, pod, nodes)
	nodeload.WriteCycle(cs, Name, s)
	s.Table.Report(ctx, pl.handle, Name, pod, pl.scorer.resources...)
	pl.scorer.Prepare(s.Table)
	return nil
}

// Score returns 100 × (1 − risk), combining resources by weight; a node
// without usable usage gets the neutral score.
func (pl *LoadVariationRiskBalancing) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s, ok := nodeload.ReadCycle(cs, Name)
	if !ok {
		s = pl.newState(ctx, pod, []fwk.NodeInfo{nodeInfo})
	}
	logger := klog.FromContext(ctx).V(4)
	i, e := s.Table.Find(nodeInfo, s.NowNano)
	score, _ := pl.scorer.Score(s.Table, i, e, s.PodEst, nodeload.Allocatable(nodeInfo), logger)
	rounded := int64(math.Round(score))
	if logger.Enabled() {
		logger.Info("Risk-balancing score", "plugin", Name, "pod", klog.KObj(pod), "node", nodeInfo.Node().Name, "score", rounded)
	}
	return rounded, nil
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
