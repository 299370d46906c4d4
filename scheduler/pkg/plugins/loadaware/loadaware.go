// Package loadaware is the LoadAware plugin: it keeps pods off nodes whose
// real usage (from load-watcher) plus the pod would exceed a threshold, and
// scores nodes by predicted usage, spreading (LeastLoaded) or packing up to a
// target (TargetPacking).
package loadaware

import (
	"context"
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// Name is the plugin's name in scheduler configurations.
const Name = "LoadAware"

var (
	_ fwk.PreFilterPlugin   = &LoadAware{}
	_ fwk.FilterPlugin      = &LoadAware{}
	_ fwk.PreScorePlugin    = &LoadAware{}
	_ fwk.ScorePlugin       = &LoadAware{}
	_ fwk.ReservePlugin     = &LoadAware{}
	_ fwk.EnqueueExtensions = &LoadAware{}
	_ fwk.SignPlugin        = &LoadAware{}
)

// strategies builds the per-resource scorer of each strategy type.
var strategies = map[config.ScoringStrategyType]func(s *config.ScoringStrategy) loadmodel.ResourceScorer{
	config.LeastLoaded: func(*config.ScoringStrategy) loadmodel.ResourceScorer { return loadmodel.LeastLoaded },
	config.TargetPacking: func(s *config.ScoringStrategy) loadmodel.ResourceScorer {
		return loadmodel.TargetPacking(*s.TargetUtilization)
	},
}

// LoadAware filters and scores nodes on predicted real usage.
type LoadAware struct {
	handle  fwk.Handle
	tracker *nodeload.Tracker

	thresholds map[usage.Resource]float64
	// stats picks the number of the window compared with each threshold
	// and scored.
	stats loadmodel.Statistics
	// checked are the resources with a threshold, in a stable order.
	checked  []usage.Resource
	weights  []loadmodel.ResourceWeight
	scored   []usage.Resource
	scorer   loadmodel.ResourceScorer
	strategy config.ScoringStrategyType
	combine  loadmodel.Combination
	window   usage.Window
	estimate loadmodel.EstimateOptions
	// filterCriticalPods applies the thresholds to system-critical pods too.
	filterCriticalPods bool
	// filtered counts rejections per resource (the tracker's counter, its
	// labels resolved once rather than on every rejected node).
	filtered map[usage.Resource]prometheus.Counter
}

// NewFactory returns the factory kube-scheduler calls for every profile that
// enables LoadAware; all instances share tracker.
func NewFactory(tracker *nodeload.Tracker) frameworkruntime.PluginFactory {
	return nodeload.Factory(tracker, New)
}

// New builds the plugin from its args, defaulting and validating them.
func New(_ context.Context, obj runtime.Object, h fwk.Handle, tracker *nodeload.Tracker) (*LoadAware, error) {
	args, err := config.DecodeArgs(Name, obj, config.SetDefaults_LoadAwareArgs, config.ValidateLoadAwareArgs)
	if err != nil {
		return nil, err
	}
	if err := tracker.Attach(Name, h); err != nil {
		return nil, err
	}
	s := args.ScoringStrategy
	pl := &LoadAware{
		handle:     h,
		tracker:    tracker,
		thresholds: args.Thresholds,
		stats:      loadmodel.Statistics(args.ThresholdStatistics),
		scorer:     strategies[s.Type](s),
		strategy:   s.Type,
		combine:    s.Combine,
		window:     usage.Window(args.Window.Duration),
		estimate:   EstimateOptions(args.PodEstimate),

		filterCriticalPods: args.FilterCriticalPods,
	}
	pl.filtered = map[usage.Resource]prometheus.Counter{}
	for _, r := range usage.Resources {
		if _, ok := args.Thresholds[r]; ok {
			pl.checked = append(pl.checked, r)
			pl.filtered[r] = tracker.Metrics().Filtered.WithLabelValues(Name, string(r))
		}
	}
	for _, r := range s.Resources {
		pl.weights = append(pl.weights, loadmodel.ResourceWeight{Resource: r.Name, Weight: r.Weight})
		pl.scored = append(pl.scored, r.Name)
	}
	return pl, nil
}

// EstimateOptions converts defaulted podEstimate args.
func EstimateOptions(e *config.PodEstimate) loadmodel.EstimateOptions {
	return loadmodel.EstimateOptions{
		RequestMultiplier: *e.RequestMultiplier,
		DefaultMilliCPU:   e.DefaultCPU.MilliValue(),
		DefaultMemory:     e.DefaultMemory.Value(),
	}
}

// Name returns the plugin's name.
func (pl *LoadAware) Name() string { return Name }

func (pl *LoadAware) newState(ctx context.Context, pod *v1.Pod) *nodeload.Cycle {
	return pl.tracker.NewCycle(ctx, Name, pod, pl.window, pl.estimate)
}

func (pl *LoadAware) state(ctx context.Context, cs fwk.CycleState, pod *v1.Pod) *nodeload.Cycle {
	if s, ok := nodeload.ReadCycle(cs, Name); ok {
		return s
	}
	return pl.newState(ctx, pod)
}

// prepare stores the cycle's state and reports nodes without usable usage.
func (pl *LoadAware) prepare(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, resources []usage.Resource) {
	s := pl.newState(ctx, pod)
	nodeload.WriteCycle(cs, Name, s)
	pl.tracker.Report(ctx, pl.handle, Name, pod, pl.tracker.Unavailable(s.Snap, nodes, pl.window, resources...))
}

// SignPod lets kube-scheduler batch pods (fwk.SignPlugin): Filter and Score
// depend on the pod only through its usage estimate and whether the
// thresholds apply to it (DaemonSet and system-critical pods).
func (pl *LoadAware) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	return []fwk.SignFragment{
		pl.tracker.SignEstimate(Name, pod, pl.estimate),
		{Key: Name + ".v1.Pod.ThresholdsExempt()", Value: pl.exempt(pod)},
	}, nil
}

// PreFilter takes the cycle's usage snapshot and estimates the pod.
func (pl *LoadAware) PreFilter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if len(pl.checked) == 0 || pl.exempt(pod) {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	pl.prepare(ctx, cs, pod, nodes, pl.checked)
	return nil, nil
}

// PreFilterExtensions returns nil: the filter does not depend on other pods' placement in the cycle.
func (pl *LoadAware) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

// Filter rejects a node whose predicted usage exceeds a threshold. Nodes
// without usable usage pass (placement falls back to requests), and
// DaemonSet pods are never filtered: they must run on every node; nor are
// system-critical pods unless filterCriticalPods says so.
func (pl *LoadAware) Filter(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	if pl.exempt(pod) {
		return nil
	}
	s := pl.state(ctx, cs, pod)
	var buf [2]loadmodel.Prediction
	preds, ok := pl.predict(buf[:0], s, nodeInfo, pl.checked)
	if !ok {
		return nil
	}
	violations := loadmodel.CheckThresholds(preds, pl.thresholds)
	if len(violations) == 0 {
		return nil
	}
	reasons := make([]string, len(violations))
	for i, v := range violations {
		reasons[i] = v.Reason()
		pl.filtered[v.Resource].Inc()
	}
	return fwk.NewStatus(fwk.Unschedulable, reasons...)
}

// predict returns the node's predicted usage for resources, from the
// statistic configured for each (thresholdStatistics), or false when its
// usage is unavailable.
func (pl *LoadAware) predict(buf []loadmodel.Prediction, s *nodeload.Cycle, nodeInfo fwk.NodeInfo, resources []usage.Resource) ([]loadmodel.Prediction, bool) {
	node := nodeInfo.Node().Name
	// Missing or stale usage: no prediction. Missing windows and invalid
	// numbers are caught by Predict.
	v, ok := s.Views.Node(node)
	if !ok || !v.Fresh {
		return nil, false
	}
	pending := pl.tracker.Pending().SumAt(s.Now, node, v.SampleTime, pl.window.Duration(), pl.estimate)
	current := func(r usage.Resource) (float64, bool) {
		st, ok := v.Stats(r)
		return pl.stats.Pick(r, st), ok
	}
	return loadmodel.Predict(buf, resources, current, pending, s.PodEst, nodeload.Allocatable(nodeInfo))
}

// PreScore takes the cycle's snapshot if PreFilter did not (score-only use).
func (pl *LoadAware) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	if _, ok := nodeload.ReadCycle(cs, Name); ok {
		return nil
	}
	pl.prepare(ctx, cs, pod, nodes, pl.scored)
	return nil
}

// Score rates a node by its predicted usage with the configured strategy,
// on the same statistic per resource as Filter (thresholdStatistics), so a
// node is never scored on a different figure from the one it is filtered
// on; a node without usable usage gets the neutral score.
func (pl *LoadAware) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s := pl.state(ctx, cs, pod)
	var buf [2]loadmodel.Prediction
	preds, ok := pl.predict(buf[:0], s, nodeInfo, pl.scored)
	if !ok {
		return nodeload.NeutralScore, nil
	}
	score := pl.combine.Score(preds, pl.weights, pl.scorer)
	if logger := klog.FromContext(ctx); logger.V(4).Enabled() {
		logger.V(4).Info("Load-aware score", "plugin", Name, "pod", klog.KObj(pod), "node", nodeInfo.Node().Name,
			"strategy", pl.strategy, "combine", pl.combine, "usage", breakdown(preds), "score", score)
	}
	return score, nil
}

// breakdown formats predictions as "cpu=40.0%+2.0%+1.3%=43.3% memory=…"
// (node + recently bound pods + this pod = predicted).
func breakdown(preds []loadmodel.Prediction) string {
	parts := make([]string, len(preds))
	for i, p := range preds {
		parts[i] = fmt.Sprintf("%s=%.1f%%+%.1f%%+%.1f%%=%.1f%%", p.Resource, p.Current, p.Pending, p.Pod, p.Total())
	}
	return strings.Join(parts, " ")
}

// ScoreExtensions returns nil: scores are already between 0 and 100.
func (pl *LoadAware) ScoreExtensions() fwk.ScoreExtensions { return nil }

// Reserve counts the pod on its node at once, so the next pods see it before
// load-watcher does (anti-herding).
func (pl *LoadAware) Reserve(ctx context.Context, _ fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	pl.tracker.Reserve(ctx, pod, node)
	return nil
}

// Unreserve forgets the pod when its placement is abandoned.
func (pl *LoadAware) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	pl.tracker.Unreserve(pod)
}

// EventsToRegister lists the cluster events after which a pod this plugin
// rejected may fit: a node added or changed, or a pod deleted (its usage
// goes). Usage itself changes without an event; rejected pods are retried
// when kube-scheduler flushes its unschedulable queue (every 5 minutes by
// default).
func (pl *LoadAware) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}},
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAllocatable | fwk.UpdateNodeTaint | fwk.UpdateNodeLabel}},
	}, nil
}

// exempt reports whether the thresholds do not apply to pod.
func (pl *LoadAware) exempt(pod *v1.Pod) bool {
	return isDaemonSetPod(pod) || (!pl.filterCriticalPods && isCriticalPod(pod))
}

// isCriticalPod reports whether pod runs at a system-critical priority
// (system-cluster-critical, system-node-critical), which only those two
// built-in priority classes may have.
func isCriticalPod(pod *v1.Pod) bool {
	if pod.Spec.Priority != nil {
		return *pod.Spec.Priority >= scheduling.SystemCriticalPriority
	}
	return pod.Spec.PriorityClassName == scheduling.SystemClusterCritical || pod.Spec.PriorityClassName == scheduling.SystemNodeCritical
}

func isDaemonSetPod(pod *v1.Pod) bool {
	for _, o := range pod.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
