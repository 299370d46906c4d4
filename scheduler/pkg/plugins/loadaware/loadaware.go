// Package loadaware is the LoadAware plugin: it keeps pods off nodes whose
// real usage (from load-watcher) plus the pod would exceed a threshold, and
// scores nodes by predicted usage, spreading (LeastLoaded) or packing up to a
// target (TargetPacking). Its score may take two more terms from the same
// per-node figures: the variation risk of LoadVariationRiskBalancing and the
// free pod slots of PodCountBalance, so that one plugin does what three did.
package loadaware

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/apis/scheduling"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/pluginargs"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadvariationriskbalancing"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/podcountbalance"
)

// Name is the plugin's name in scheduler configurations.
const Name = loadmodel.SchedulerPlugin

var (
	_ fwk.PreFilterPlugin   = &LoadAware{}
	_ fwk.FilterPlugin      = &LoadAware{}
	_ fwk.PostFilterPlugin  = &LoadAware{}
	_ fwk.PreScorePlugin    = &LoadAware{}
	_ fwk.ScorePlugin       = &LoadAware{}
	_ fwk.ReservePlugin     = &LoadAware{}
	_ fwk.EnqueueExtensions = &LoadAware{}
	_ fwk.SignPlugin        = &LoadAware{}
)

// LoadAware filters and scores nodes on predicted real usage.
type LoadAware struct {
	handle  fwk.Handle
	tracker *nodeload.Tracker

	thresholds map[usage.Resource]float64
	// stats picks the number of the window compared with each threshold
	// and scored.
	stats loadmodel.Statistics
	// checked are the resources with a threshold, in a stable order, and
	// checks the same, each with what Filter reads of it.
	checked []usage.Resource
	checks  []resourceFigure
	weights []loadmodel.ResourceWeight
	// scored are the resources scored, in the weights' order, and figures
	// the same, each with what Score reads of it.
	scored  []usage.Resource
	figures []resourceFigure
	// scoresChecks is set when Score predicts the same figures as Filter
	// (the same resources and statistics, in the same order), so Filter's
	// predictions serve both.
	scoresChecks bool
	scorer       loadmodel.ResourceScorer
	strategy     config.ScoringStrategyType
	combine      loadmodel.Combination
	window       usage.Window
	estimate     loadmodel.EstimateOptions
	// filterCriticalPods applies the thresholds to system-critical pods too.
	filterCriticalPods bool
	// placementEvents records the figures a pod was placed by in an Event,
	// at placementRate.
	placementEvents bool
	placementRate   flowcontrol.RateLimiter
	// filtered counts rejections per checked resource (the tracker's
	// counter, its labels resolved once); a cycle counts its own and adds
	// them once (see cycle.flushFiltered), not on every rejected node.
	filtered []prometheus.Counter

	// The terms of the score and their weights: the predicted usage's
	// (always), the variation risk's (risk, nil when off) and the free pod
	// slots' (podCountWeight, 0 when off).
	usageWeight    float64
	risk           *loadvariationriskbalancing.Scorer
	riskWeight     float64
	podCountWeight float64
	totalWeight    float64

	// waiting keeps the pods no node could take because of their usage
	// until a node cools down.
	waiting *nodeload.Waiter
	// planned are the descheduler's moves still waiting for their
	// replacement (plannedMoves); nil when not read.
	planned *plannedMoves
	// last is the state of the newest cycle, found without the cycle
	// state's lookup for every node.
	last atomic.Pointer[lastCycle]
	// memos holds the terms Filter works out for Score (see memo), one
	// cycle's at a time.
	memos memos
}

// resourceFigure is what LoadAware reads of one resource: its place in
// usage.Resources, the statistic that stands for its usage, and its
// threshold when it has one.
type resourceFigure struct {
	resource  usage.Resource
	at        int
	stat      loadmodel.Statistic
	threshold float64
}

type lastCycle struct {
	cs fwk.CycleState
	s  *cycle
}

// NewFactory returns the factory kube-scheduler calls for every profile that
// enables LoadAware; all instances share tracker.
func NewFactory(tracker *nodeload.Tracker) frameworkruntime.PluginFactory {
	return nodeload.Factory(tracker, New)
}

// New builds the plugin from its args, defaulting and validating them.
func New(ctx context.Context, obj runtime.Object, h fwk.Handle, tracker *nodeload.Tracker) (*LoadAware, error) {
	args, err := pluginargs.Decode(Name, obj, config.SetDefaults_LoadAwareArgs, config.ValidateLoadAwareArgs)
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
		scorer:     args.Settings.Scorer(),
		strategy:   s.Type,
		combine:    s.Combine,
		window:     usage.Window(args.Window.Duration),
		estimate:   args.PodEstimate.Options(),

		filterCriticalPods: args.FilterCriticalPods,
		placementEvents:    args.PlacementEvents == nil || *args.PlacementEvents,
		placementRate:      flowcontrol.NewTokenBucketRateLimiter(placementEventsPerSecond, placementEventBurst),
		usageWeight:        float64(s.Weight),
	}
	figure := func(r usage.Resource) resourceFigure {
		return resourceFigure{resource: r, at: nodeload.ResourceIndex(r), stat: pl.stats[r], threshold: args.Thresholds[r]}
	}
	stats := maps.Clone(pl.stats).Complete()
	for _, r := range usage.Resources {
		if _, ok := args.Thresholds[r]; ok {
			pl.checked = append(pl.checked, r)
			pl.checks = append(pl.checks, figure(r))
			pl.filtered = append(pl.filtered, tracker.Metrics().Filtered.WithLabelValues(Name, string(r)))
			tracker.Metrics().Thresholds.WithLabelValues(Name, string(r), pl.window.String(), nodeload.StatisticLabel(stats[r])).Set(args.Thresholds[r])
		}
	}
	pl.weights = args.Settings.Weights()
	for _, r := range s.Resources {
		pl.scored = append(pl.scored, r.Name)
		pl.figures = append(pl.figures, figure(r.Name))
	}
	pl.scoresChecks = slices.EqualFunc(pl.checks, pl.figures, func(c, f resourceFigure) bool {
		return c.resource == f.resource && c.stat == f.stat
	})
	if t := args.VariationRisk; t != nil {
		settings := t.Settings()
		pl.risk, pl.riskWeight = loadvariationriskbalancing.NewScorer(&settings), float64(t.Weight)
	}
	if t := args.PodCountBalance; t != nil {
		pl.podCountWeight = float64(t.Weight)
	}
	pl.totalWeight = pl.usageWeight + pl.riskWeight + pl.podCountWeight
	if args.PlannedMoves != nil {
		if pl.planned, err = newPlannedMoves(ctx, h.ClientSet(), args.PlannedMoves, tracker.Now, tracker.Metrics().PlannedMoves.WithLabelValues(Name)); err != nil {
			return nil, fmt.Errorf("watching the descheduler's moves: %w", err)
		}
	}
	if len(pl.checked) > 0 {
		pl.waiting = tracker.NewWaiter(Name, h, pl.window, pl.estimate, pl.passes)
		tracker.StartWaking(ctx)
	}
	return pl, nil
}

// Name returns the plugin's name.
func (pl *LoadAware) Name() string { return Name }

// cycle is what LoadAware's extension points share in one scheduling
// cycle. Clone shares it: the framework clones the cycle's state to try a
// node with other pods (preemption, nominated pods), and what it holds is
// the same for those.
type cycle struct {
	*nodeload.Cycle
	// risk is the table the variationRisk term reads, nil without it.
	risk *nodeload.Table
	// mostFree is the most free pod slots of the nodes scored, for the
	// podCountBalance term; set at PreScore.
	mostFree int64
	// rejected is set when Filter rejects a node: if the pod is then placed
	// nowhere, it waits for a node to cool down (PostFilter).
	rejected atomic.Bool
	// filtered counts the nodes Filter rejected per checked resource, not
	// yet added to the metric.
	filtered [2]atomic.Int64
	// verbose says whether Score logs each node (-v=4); set at PreScore.
	verbose bool
	// overloaded are the nodes Filter rejected, for the placement event.
	overloaded rejections
	// planned are the nodes the descheduler planned a new pod of the pod's
	// workload on (plannedMoves.nodes); set at PreScore, nil for most pods.
	planned []string
	// memo keeps the terms Filter worked out for Score; without slots when
	// Filter does not run in the cycle.
	memo memo
}

// Clone implements fwk.StateData.
func (c *cycle) Clone() fwk.StateData { return c }

// flushFiltered adds the rejections the cycle counted to the metric: when
// the pod is placed or placed nowhere, and, for those counted later (the
// filters preemption runs), when the next cycle starts.
func (pl *LoadAware) flushFiltered(c *cycle) {
	for i, counter := range pl.filtered {
		if n := c.filtered[i].Swap(0); n > 0 {
			counter.Add(float64(n))
		}
	}
}

// newState takes the cycle's usage snapshot, its tables of nodes (the
// scheduler snapshot's whole list) and the pod's estimate.
func (pl *LoadAware) newState(ctx context.Context, pod *v1.Pod, nodes []fwk.NodeInfo) *cycle {
	s := &cycle{Cycle: pl.tracker.NewCycle(ctx, Name, pod, nodes, pl.window, pl.estimate)}
	if pl.risk != nil {
		s.risk = pl.tracker.Table(s.Snap, nodes, pl.risk.Window(), pl.estimate)
	}
	return s
}

// readState returns the state the cycle of cs wrote.
func (pl *LoadAware) readState(cs fwk.CycleState) (*cycle, bool) {
	if l := pl.last.Load(); l != nil && l.cs == cs {
		return l.s, true
	}
	d, err := cs.Read(fwk.StateKey(Name))
	if err != nil {
		return nil, false
	}
	s, ok := d.(*cycle)
	return s, ok
}

// state returns the cycle's state, or makes one for an extension point
// running without its PreFilter or PreScore (a configuration that enables
// LoadAware at filter or score alone).
func (pl *LoadAware) state(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *cycle {
	if s, ok := pl.readState(cs); ok {
		return s
	}
	return pl.newState(ctx, pod, nodeload.AllNodes(pl.handle, []fwk.NodeInfo{nodeInfo}))
}

// prepare stores the cycle's state and reports nodes whose usage cannot be
// used for resources.
func (pl *LoadAware) prepare(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo, resources []usage.Resource) *cycle {
	s := pl.newState(ctx, pod, nodes)
	cs.Write(fwk.StateKey(Name), s)
	if l := pl.last.Swap(&lastCycle{cs: cs, s: s}); l != nil {
		pl.flushFiltered(l.s)
	}
	s.Table.Report(ctx, pl.handle, Name, pod, resources...)
	if s.risk != nil && len(s.Table.Unavailable(resources...).Nodes) == 0 {
		// The risk's window lacks nodes the other window has (a window
		// load-watcher does not keep): say so too.
		s.risk.Report(ctx, pl.handle, Name, pod, pl.risk.Resources()...)
	}
	return s
}

// SignPod lets kube-scheduler batch pods (fwk.SignPlugin): Filter and Score
// depend on the pod only through its usage estimate and whether the
// thresholds apply to it (DaemonSet and system-critical pods); the free pod
// slots do not depend on it at all. A pod of a workload with a planned move
// is not batched.
func (pl *LoadAware) SignPod(_ context.Context, pod *v1.Pod) ([]fwk.SignFragment, *fwk.Status) {
	if pl.planned != nil && pl.planned.nodes(pod) != nil {
		// Its score depends on its workload: a planned move's replacement
		// is scored on its own.
		return nil, fwk.NewStatus(fwk.Unschedulable, "the pod replaces a planned move")
	}
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
	s := pl.prepare(ctx, cs, pod, nodes, pl.checked)
	s.memo = pl.memos.next(s.Table.Len())
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
	s := pl.state(ctx, cs, pod, nodeInfo)
	var buf [2]loadmodel.Prediction
	i, e := s.Table.Find(nodeInfo, s.NowNano)
	alloc := nodeload.Allocatable(nodeInfo)
	preds, ok := pl.predict(buf[:0], e, alloc, s.PodEst, pl.checks)
	if !ok || !pl.exceeds(preds) {
		if s.memo.slots != nil && i >= 0 {
			pl.remember(s, i, e, alloc, preds, ok)
		}
		return nil
	}
	s.rejected.Store(true)
	var reasons []string
	for i, p := range preds {
		if p.Exceeds(pl.checks[i].threshold) {
			reasons = append(reasons, loadmodel.Violation{Prediction: p, Threshold: pl.checks[i].threshold}.Reason())
			s.filtered[i].Add(1)
		}
	}
	if pl.placementEvents {
		s.overloaded.note(nodeInfo.Node().Name, reasons)
	}
	return fwk.NewStatus(fwk.Unschedulable, reasons...)
}

// exceeds reports whether a prediction of the checked resources is above
// its threshold.
func (pl *LoadAware) exceeds(preds []loadmodel.Prediction) bool {
	for i, p := range preds {
		if p.Exceeds(pl.checks[i].threshold) {
			return true
		}
	}
	return false
}

// passes tells the waiter whether Filter would let a pod estimated at est
// through the node of e, with allocatable alloc.
func (pl *LoadAware) passes(e *nodeload.NodeEntry, alloc, est loadmodel.Amount) bool {
	var buf [2]loadmodel.Prediction
	preds, ok := pl.predict(buf[:0], e, alloc, est, pl.checks)
	return !ok || !pl.exceeds(preds)
}

// predict returns the predicted usage of resources on the node of e, with
// allocatable alloc, once a pod estimated at est lands there, from the
// statistic configured for each (thresholdStatistics): the node's usage,
// its pending pods (e.Pending) and the pod. ok is false when its usage is
// unavailable: stale, missing, or not a valid number for a resource.
func (pl *LoadAware) predict(buf []loadmodel.Prediction, e *nodeload.NodeEntry, alloc, est loadmodel.Amount, resources []resourceFigure) ([]loadmodel.Prediction, bool) {
	if !e.Fresh {
		return nil, false
	}
	for _, f := range resources {
		current, ok := e.Figure(f.at, f.stat)
		if !ok {
			return nil, false
		}
		p, ok := loadmodel.PredictResource(f.resource, current, e.Pending, est, alloc)
		if !ok {
			return nil, false
		}
		buf = append(buf, p)
	}
	return buf, true
}

// PostFilter keeps a pod that no node could take, when LoadAware rejected
// some of them, until a node it rejected cools down; then the pod goes back
// to the active queue at once, rather than when an unrelated event or the
// queue's periodic flush moves it. It never makes the pod schedulable
// itself.
func (pl *LoadAware) PostFilter(_ context.Context, cs fwk.CycleState, pod *v1.Pod, _ fwk.NodeToStatusReader) (*fwk.PostFilterResult, *fwk.Status) {
	if s, ok := pl.readState(cs); ok {
		pl.flushFiltered(s)
		if s.rejected.Load() && pl.waiting != nil {
			pl.waiting.Wait(pod, s.PodEst, s.Table)
		}
	}
	return nil, fwk.NewStatus(fwk.Unschedulable)
}

// PreScore takes the cycle's snapshot if PreFilter did not (score-only use
// or a pod exempt from the thresholds), finds the most free pod slots for
// the podCountBalance term, and the nodes the descheduler planned a pod of
// the pod's workload on: one lookup per pod, so Score compares node names.
func (pl *LoadAware) PreScore(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) *fwk.Status {
	s, ok := pl.readState(cs)
	if !ok {
		s = pl.prepare(ctx, cs, pod, nodeload.AllNodes(pl.handle, nodes), pl.scored)
	}
	if pl.podCountWeight > 0 {
		s.mostFree = podcountbalance.MostFree(nodes)
	}
	if pl.risk != nil {
		pl.risk.Prepare(s.risk)
	}
	if pl.planned != nil {
		s.planned = pl.planned.nodes(pod)
	}
	s.verbose = klog.FromContext(ctx).V(4).Enabled()
	return nil
}

// nodeScore is how Score rated one node, term by term.
type nodeScore struct {
	// preds is the predicted usage of the scored resources, nil when the
	// node's usage is unavailable.
	preds []loadmodel.Prediction
	// usage is the predicted usage's score (neutral without usage), risk
	// the variation risk's and pods the free pod slots' (free of them),
	// each between 0 and 100.
	usage, risk, pods float64
	free              int64
	// total is the weighted mean of the terms, rounded; the highest score
	// when planned.
	total int64
	// planned is set for the node the descheduler planned the pod's
	// workload on, when its usage still takes the pod.
	planned bool
}

// score rates the node of nodeInfo: the predicted usage with the configured
// strategy, on the same statistic per resource as Filter
// (thresholdStatistics), so a node is never scored on a different figure
// from the one it is filtered on, and the terms configured besides. A node
// without usable usage gets the neutral score for its usage and risk. The
// node a planned move of the pod's workload names gets the highest score,
// as long as the thresholds still let the pod onto it (Filter rejects it
// otherwise, unless the pod is exempt): the descheduler evicted a pod
// expecting its replacement there.
func (pl *LoadAware) score(buf []loadmodel.Prediction, s *cycle, nodeInfo fwk.NodeInfo, logger klog.Logger) nodeScore {
	var ns nodeScore
	alloc := nodeload.Allocatable(nodeInfo)
	i, e := s.Table.Find(nodeInfo, s.NowNano)
	preds, ok := pl.predict(buf, e, alloc, s.PodEst, pl.figures)
	if ok {
		ns.preds = preds
	}
	ns.usage, ns.risk = pl.terms(s, i, e, alloc, preds, ok, logger)
	pl.total(&ns, s, nodeInfo)
	if s.planned != nil && slices.Contains(s.planned, e.Name) && pl.passes(e, alloc, s.PodEst) {
		ns.planned, ns.total = true, fwk.MaxNodeScore
	}
	return ns
}

// terms works out the usage and risk terms of the score of the node of e,
// at place i of the cycle's table (-1 when it has none), with allocatable
// alloc, from preds, its predictions of the scored resources (ok is false
// when its usage is unavailable: the usage term is then neutral).
func (pl *LoadAware) terms(s *cycle, i int, e *nodeload.NodeEntry, alloc loadmodel.Amount, preds []loadmodel.Prediction, ok bool, logger klog.Logger) (usage, risk float64) {
	usage = nodeload.NeutralScore
	if ok {
		usage = pl.combine.Value(preds, pl.weights, pl.scorer)
	}
	if pl.risk != nil {
		// The risk's table holds the same nodes in the same places.
		var re *nodeload.NodeEntry
		if i >= 0 {
			re = s.risk.At(i, s.NowNano)
		} else {
			re = s.risk.ByName(e.Name, s.NowNano)
		}
		risk, _ = pl.risk.Score(s.risk, i, re, s.PodEst, alloc, logger)
	}
	return usage, risk
}

// total adds the free pod slots' term of the node of nodeInfo to ns's
// usage and risk, and weighs the three into ns.total.
func (pl *LoadAware) total(ns *nodeScore, s *cycle, nodeInfo fwk.NodeInfo) {
	sum := pl.usageWeight * ns.usage
	if pl.risk != nil {
		sum += pl.riskWeight * ns.risk
	}
	if pl.podCountWeight > 0 {
		ns.free = podcountbalance.Free(nodeInfo)
		ns.pods = podcountbalance.Score(ns.free, s.mostFree)
		sum += pl.podCountWeight * ns.pods
	}
	ns.total = int64(math.Round(sum / pl.totalWeight))
}

// Score rates a node by the weighted mean of its terms (see score), from
// the terms Filter kept when it kept them (see memo).
func (pl *LoadAware) Score(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s := pl.state(ctx, cs, pod, nodeInfo)
	if !s.verbose && s.planned == nil {
		if usage, risk, ok := s.memo.recall(s.Table.Pos(nodeInfo)); ok {
			ns := nodeScore{usage: usage, risk: risk}
			pl.total(&ns, s, nodeInfo)
			return ns.total, nil
		}
	}
	var logger klog.Logger
	if s.verbose {
		logger = klog.FromContext(ctx).V(4)
	}
	var buf [2]loadmodel.Prediction
	ns := pl.score(buf[:0], s, nodeInfo, logger)
	if s.verbose {
		kv := []any{"plugin", Name, "pod", klog.KObj(pod), "node", nodeInfo.Node().Name, "strategy", pl.strategy, "combine", pl.combine}
		if ns.preds != nil {
			kv = append(kv, "usage", breakdown(ns.preds))
		}
		if pl.risk != nil || pl.podCountWeight > 0 {
			kv = append(kv, "terms", fmt.Sprintf("usage=%.1f×%g risk=%.1f×%g pods=%.1f×%g (free %d of %d)",
				ns.usage, pl.usageWeight, ns.risk, pl.riskWeight, ns.pods, pl.podCountWeight, ns.free, s.mostFree))
		}
		if ns.planned {
			kv = append(kv, "planned", true)
		}
		logger.Info("Load-aware score", append(kv, "score", ns.total)...)
	}
	return ns.total, nil
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
func (pl *LoadAware) Reserve(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, node string) *fwk.Status {
	if s, ok := pl.readState(cs); ok {
		pl.flushFiltered(s)
		if pl.placementEvents && s.overloaded.any() {
			pl.recordPlacement(ctx, cs, s, pod, node)
		}
	}
	pl.tracker.Reserve(ctx, pod, node)
	if pl.waiting != nil {
		pl.waiting.Forget(pod.UID)
	}
	if s, ok := pl.readState(cs); ok && slices.Contains(s.planned, node) {
		pl.planned.take(pod, node)
	}
	return nil
}

// Unreserve forgets the pod when its placement is abandoned, and gives
// back the planned move it took.
func (pl *LoadAware) Unreserve(_ context.Context, _ fwk.CycleState, pod *v1.Pod, _ string) {
	pl.tracker.Unreserve(pod)
	if pl.planned != nil {
		pl.planned.release(pod.UID)
	}
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

// EventsToRegister lists the cluster events after which a pod this plugin
// rejected may fit, each with a hint that leaves the pod waiting when the
// event cannot help it: a pod deleted from a node or shrunk (its usage and
// its pending estimate go), a node added (no usage yet) or grown. Usage
// itself changes without a cluster event: a pod no node could take waits in
// the plugin's waiter (PostFilter) and goes back to the active queue when a
// new usage snapshot shows a node it was rejected on cool enough.
func (pl *LoadAware) EventsToRegister(context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: nodeload.PodEvents, QueueingHintFn: nodeload.AfterPodEvent},
		{Event: nodeload.NodeEvents, QueueingHintFn: nodeload.AfterNodeEvent},
	}, nil
}
