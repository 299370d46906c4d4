package loadawarebalance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/pluginargs"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// PluginName is the name of the plugin in a descheduler policy.
const PluginName = "LoadAwareBalance"

// maxEventReason is the longest reason an event may carry.
const maxEventReason = 128

var _ frameworktypes.BalancePlugin = &LoadAwareBalance{}

// LoadAwareBalance evicts pods from nodes hot by real usage when a cool node
// can take them, and remembers its moves so they are not undone.
type LoadAwareBalance struct {
	balance.Plugin
	args *LoadAwareBalanceArgs
	// replicas counts a candidate's siblings: how many moves balancing may
	// make of its workload, and whether it is its controller's only pod.
	// nil without an informer factory (then every workload counts as one
	// pod).
	replicas *balance.ReplicaCounter
}

// New builds the plugin from its args.
func New(ctx context.Context, obj runtime.Object, handle frameworktypes.Handle, deps balance.Deps) (*LoadAwareBalance, error) {
	args, err := pluginargs.Decode(PluginName, obj, func(a *LoadAwareBalanceArgs) { SetDefaults_LoadAwareBalanceArgs(a) }, func(_ *field.Path, a *LoadAwareBalanceArgs) error { return ValidateLoadAwareBalanceArgs(a) })
	if err != nil {
		return nil, err
	}
	base, err := balance.NewPlugin(ctx, PluginName, handle, deps, &args.EvictionArgs)
	if err != nil {
		return nil, err
	}
	p := &LoadAwareBalance{Plugin: base, args: args}
	if handle.SharedInformerFactory() != nil {
		if p.replicas, err = balance.NewReplicaCounter(handle.SharedInformerFactory().Core().V1().Pods().Informer()); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Name returns the plugin name.
func (p *LoadAwareBalance) Name() string { return PluginName }

// cycle is the state of one Balance call.
type cycle struct {
	// nodes are every node of the cycle: where a pod could go.
	nodes []*v1.Node
	now   time.Time
	loads map[string]balance.NodeLoad
	// limits are the thresholds each node is held under: HighThresholds.
	limits map[string]balance.ResourceThresholds
	// unsampled is what the pods that started on each destination add
	// that its window does not show yet (balance.Plugin.Unsampled): the
	// scheduler counts them, so a destination is judged with them.
	unsampled map[string]balance.NodeLoad
	// shares are each node's share of the cluster's size (sizeShares).
	shares map[string]float64
	// mean is the cluster's mean usage when the cycle began.
	mean        balance.NodeLoad
	evicted     int32
	byNode      map[string]int32
	byNamespace map[string]int32
	stopped     bool
	// hot are the nodes that shed as hot this cycle.
	hot map[string]bool
	// swinging are the nodes whose usage comes and goes within the window
	// (swings): no plan counts on them.
	swinging map[string]bool
	// swings are, per node, how far its window peak is above its load.
	swings map[string]balance.NodeLoad
	// reshaped is when the nodes that take pods last changed (a join, a
	// node leaving, a cordon): a plan may move on from moves made before.
	reshaped time.Time
}

// Balance runs one descheduling cycle.
func (p *LoadAwareBalance) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	nodes = balance.ByName(nodes)
	logger := p.Logger.WithValues("ExtensionPoint", frameworktypes.BalanceExtensionPoint)
	s := p.Deps.Store
	s.Lock()
	defer s.Unlock()
	// The moves kept in the cluster: a new leader's first cycle undoes
	// nothing its predecessor did.
	p.Deps.Recall(ctx, logger)
	defer p.Deps.Keep(ctx, logger)

	c := &cycle{nodes: nodes, now: p.Deps.Clock.Now(), loads: map[string]balance.NodeLoad{}, limits: map[string]balance.ResourceThresholds{},
		byNode: map[string]int32{}, byNamespace: map[string]int32{}, shares: sizeShares(nodes),
		hot: map[string]bool{}, swinging: map[string]bool{}, swings: map[string]balance.NodeLoad{}}
	s.Expire(c.now, max(p.args.BalanceCooldown.Duration, p.args.Window.Duration))
	var schedulable []string
	for _, n := range nodes {
		if !n.Spec.Unschedulable {
			schedulable = append(schedulable, n.Name)
		}
	}
	c.reshaped = s.ObserveShape(schedulable, c.now)
	p.Deps.FollowReplacements(ctx, logger, p.Handle, PluginName, nodes)

	snap := p.Deps.Usage.Snapshot()
	window := usage.Window(p.args.Window.Duration)
	present := map[string]bool{}
	inFlight := map[string]balance.NodeLoad{}
	for _, n := range nodes {
		present[n.Name] = true
		load, ok := balance.ReadLoad(snap, n.Name, window, p.args.ThresholdStatistics, p.args.HighThresholds, p.args.LowThresholds, p.args.DeviationThresholds)
		if !ok {
			// Unknown usage is neither hot nor a destination.
			s.ObserveHot(n.Name, false)
			p.Deps.Metrics.SkippedCandidates.WithLabelValues(PluginName, balance.SkipReason(snap, n.Name)).Inc()
			logger.V(3).Info("Node has no fresh usage; neither hot nor a destination", "node", klog.KObj(n), "reason", balance.SkipReason(snap, n.Name))
			continue
		}
		inFlight[n.Name] = s.InFlight(n.Name, snap.Nodes[n.Name].SampleTime, window.Duration(), p.args.ThresholdStatistics)
		c.loads[n.Name] = load.Add(inFlight[n.Name], 1)
		if r, by := swings(snap.Nodes[n.Name], window, p.args.DeviationThresholds, p.args.ThresholdStatistics); r != "" {
			c.swinging[n.Name] = true
			logger.V(2).Info("Node's usage comes and goes within the window; no plan counts on it", "node", klog.KObj(n), "resource", r,
				"peakOverAverage", by, "deviation", p.args.DeviationThresholds[r])
		}
	}
	mean := meanLoad(c.loads)
	c.mean = mean
	var hot []*v1.Node
	var dests destinations
	for _, n := range nodes {
		load, ok := c.loads[n.Name]
		if !ok {
			continue
		}
		limit := p.limit()
		c.limits[n.Name] = limit
		streak := s.ObserveHot(n.Name, p.stillOver(logger, snap, n, window, limit, load, mean, inFlight[n.Name]))
		switch {
		case streak >= *p.args.ConsecutiveHotCycles:
			hot = append(hot, n)
			c.hot[n.Name] = true
		case streak > 0:
			logger.V(2).Info("Node above a high threshold, not hot yet", "node", klog.KObj(n), "cycles", streak, "needed", *p.args.ConsecutiveHotCycles, "usage", load)
		default:
			peak, calm := p.calmAtPeak(snap, n.Name, window, inFlight[n.Name])
			c.swings[n.Name] = peak.Add(load, -1)
			if !calm {
				continue
			}
			dests.relief = append(dests.relief, n)
			if p.args.LowThresholds.AllBelow(load) && p.belowMean(load, mean) {
				dests.cool = append(dests.cool, n)
			}
		}
	}
	s.SetCool(c.loads, p.args.LowThresholds, p.args.HighThresholds)
	s.RetainHot(present)
	p.WarnGrowth(logger, nodes)
	p.Deps.Metrics.HotNodes.WithLabelValues(PluginName).Set(float64(len(hot)))
	if len(c.loads) == 0 {
		logger.Info("Usage is stale or missing for every node; evicting nothing this cycle", "nodes", len(nodes))
		return nil
	}
	c.unsampled = map[string]balance.NodeLoad{}
	for _, n := range nodes {
		if _, ok := c.loads[n.Name]; ok {
			c.unsampled[n.Name] = p.Unsampled(ctx, n, snap.Nodes[n.Name].SampleTime, window.Duration())
		}
	}
	// The hottest node first: it needs the cool capacity most. Names break
	// ties: the nodes come in the informer's order, which is random.
	slices.SortStableFunc(hot, func(a, b *v1.Node) int {
		return cmp.Or(cmp.Compare(maxExcess(c.limits[b.Name], c.loads[b.Name]), maxExcess(c.limits[a.Name], c.loads[a.Name])),
			cmp.Compare(a.Name, b.Name))
	})
	for _, n := range hot {
		if c.stopped {
			break
		}
		p.balanceNode(ctx, logger, c, n, shedding{limit: c.limits[n.Name], to: dests})
	}
	if !c.stopped {
		p.rebalance(ctx, logger, c, dests)
	}
	return nil
}

// stillOver reports whether node, whose load (the window's statistic per
// resource, moves in flight included) is load, is over limit on some
// resource, unless its newest sample has fallen back to the cluster's mean
// on every such resource: that node is cooling by itself (a process outside
// Kubernetes stopped, a wave of load fell), and moving its pods would
// answer a load that is gone. A newest sample between the mean and the
// limit says nothing a noisy node's would not. Without a newest sample the
// statistic alone decides.
func (p *LoadAwareBalance) stillOver(logger klog.Logger, snap *usage.Snapshot, node *v1.Node, window usage.Window, limit balance.ResourceThresholds,
	load, mean, inFlight balance.NodeLoad) bool {
	over := limit.Above(load)
	if len(over) == 0 {
		return false
	}
	latest, ok := balance.ReadLatest(snap, node.Name, window, limit)
	if !ok {
		return true
	}
	latest = latest.Add(inFlight, 1)
	if slices.ContainsFunc(over, func(r usage.Resource) bool { return latest[r] > mean[r] }) {
		return true
	}
	logger.V(2).Info("Node over its limit on the window's statistic, back at the cluster's mean on its newest sample: cooling by itself, not shedding",
		"node", klog.KObj(node), "resources", over, "usage", load, "newest", latest, "mean", mean, "limit", limit)
	return false
}

// shedding is what one hot node sheds pods towards this cycle.
type shedding struct {
	// limit is what the node is brought under.
	limit balance.ResourceThresholds
	// to are the destinations.
	to destinations
}

// destinations are the nodes a pod may move to this cycle. A pod moved off a
// node over the scheduler's thresholds may go to any node that is not hot
// and stays under the high thresholds with the pod (relief). Any other move
// goes only to a cool node: under the low thresholds and below the
// cluster's mean (cool), so that relieving or balancing one node does not
// warm another towards hot.
type destinations struct {
	relief, cool []*v1.Node
}

// belowMean reports whether load is under the cluster mean for every
// resource with a deviation threshold: only such nodes are cool.
func (p *LoadAwareBalance) belowMean(load, mean balance.NodeLoad) bool {
	for r := range p.args.DeviationThresholds {
		if !(load[r] < mean[r]) {
			return false
		}
	}
	return true
}

// limit is the thresholds a node is held under: HighThresholds. Below
// them, balance is the plan's (rebalance).
func (p *LoadAwareBalance) limit() balance.ResourceThresholds {
	return maps.Clone(p.args.HighThresholds)
}

// meanLoad is the mean of every resource over the nodes with usage, summed
// in node-name order: a sum of floats in map order differs in its last bits
// from one cycle to the next, and a node at the edge of a threshold with it.
func meanLoad(loads map[string]balance.NodeLoad) balance.NodeLoad {
	out := balance.NodeLoad{}
	for _, node := range slices.Sorted(maps.Keys(loads)) {
		for r, v := range loads[node] {
			out[r] += v / float64(len(loads))
		}
	}
	return out
}

// swings returns a resource, judged on a sample of the window rather than
// its average (thresholdStatistics), on which the node's window peak is
// more than its deviation threshold above the window's average, and by how
// much; "" when there is none. Such a node's load comes and goes (a backup
// job outside Kubernetes): the figure the plan would count on is the
// newest sample, high or low as the job runs or not, and a placement made
// for it would be wrong for part of every window. A resource judged on its
// average (CPU, by default) is smoothed already.
func swings(nu usage.NodeUsage, window usage.Window, deviation balance.ResourceThresholds, statistics loadmodel.Statistics) (usage.Resource, float64) {
	stats := statistics.Complete()
	for _, r := range slices.Sorted(maps.Keys(deviation)) {
		st, ok := nu.Get(window, r)
		if ok && stats[r] != loadmodel.Average && st.Max-st.Avg > deviation[r] {
			return r, st.Max - st.Avg
		}
	}
	return "", 0
}

// calmAtPeak returns node's window maximum, corrected for moves in flight,
// and whether it stays under every high threshold: a node whose load comes
// and goes (a backup job, a cron) is no destination between two peaks.
func (p *LoadAwareBalance) calmAtPeak(snap *usage.Snapshot, node string, window usage.Window, inFlight balance.NodeLoad) (balance.NodeLoad, bool) {
	peak, ok := balance.ReadPeak(snap, node, window, p.args.HighThresholds, p.args.DeviationThresholds)
	if !ok {
		return nil, false
	}
	peak = peak.Add(inFlight, 1)
	return peak, len(p.args.HighThresholds.Above(peak)) == 0
}

// balanceNode evicts pods from a hot node until its projected usage is
// under job's limit (its goal), a limit is reached or no candidate can
// move. Balance below the high thresholds is the plan's (rebalance).
func (p *LoadAwareBalance) balanceNode(ctx context.Context, logger klog.Logger, c *cycle, node *v1.Node, job shedding) {
	s := p.Deps.Store
	logger = logger.WithValues("node", klog.KObj(node))
	pods, err := p.PodsOn(node.Name, p.PodFilter)
	if err != nil {
		logger.Error(err, "Listing pods of a hot node")
		return
	}
	limit := job.limit
	hotResources := limit.Above(c.loads[node.Name])
	logger.Info("Node is hot", "resources", hotResources, "usage", c.loads[node.Name], "evictable", len(pods))
	// A pod whose memory keeps growing stays: it would heat any node, and
	// what the node cannot shed counts in its goal.
	pods = p.WithoutGrowing(logger, PluginName, pods)
	// So does a pod its volumes keep here: moving it frees nothing.
	pods = p.WithoutPinned(logger, PluginName, pods, c.nodes)
	// What each pod uses, and its share of this node: what moving it frees.
	amounts := make(map[*v1.Pod]loadmodel.Amount, len(pods))
	shares := make(map[*v1.Pod]balance.NodeLoad, len(pods))
	for _, pod := range pods {
		amounts[pod] = p.Deps.PodAmount(ctx, PluginName, pod)
		shares[pod] = p.Deps.Model.Share(amounts[pod], node)
	}
	limit = p.goal(logger, c.loads[node.Name], limit, pods, shares)
	// A pod whose workload was moved onto this node within balanceCooldown
	// goes last, even where the move no longer holds it (overtaken): the
	// workload has restarted once already, and moving it on while another
	// pod can cool the node would make the cluster pay that restart twice.
	balanceCooldown := p.args.BalanceCooldown.Duration
	sortCandidates(pods, func(pod *v1.Pod) bool {
		wl, ok := balance.WorkloadOf(pod)
		return ok && s.Received(wl, node.Name, c.now, balanceCooldown)
	}, func(pod *v1.Pod) float64 {
		var sum float64
		for _, r := range hotResources {
			sum += shares[pod][r]
		}
		return sum
	})
	for _, pod := range pods {
		over := limit.Above(c.loads[node.Name])
		if len(over) == 0 {
			logger.V(2).Info("Projected usage under the high thresholds", "usage", c.loads[node.Name])
			return
		}
		if c.byNode[node.Name] >= *p.args.MaxEvictionsPerNode {
			logger.V(2).Info("Eviction limit per node reached", "limit", *p.args.MaxEvictionsPerNode)
			return
		}
		if c.evicted >= *p.args.MaxEvictionsPerCycle {
			logger.V(2).Info("Eviction limit per cycle reached", "limit", *p.args.MaxEvictionsPerCycle)
			c.stopped = true
			return
		}
		podLogger := logger.WithValues("pod", klog.KObj(pod))
		if !relieves(shares[pod], over) {
			p.skip(podLogger, balance.SkipNoRelief, "pod uses next to nothing of what the node is over its limits on; moving it would restart it for nothing",
				"resources", over)
			continue
		}
		if !p.PlacedByBallast(pod) {
			p.skip(podLogger, balance.SkipOtherScheduler, "pod is placed by another scheduler, which would not place its replacement by real usage",
				"schedulerName", pod.Spec.SchedulerName)
			continue
		}
		if c.byNamespace[pod.Namespace] >= *p.args.MaxEvictionsPerNamespace {
			p.skip(podLogger, balance.SkipLimit, "namespace eviction limit reached")
			continue
		}
		wl, ok := balance.WorkloadOf(pod)
		if !ok {
			p.skip(podLogger, balance.SkipFiltered, "pod has no controller to replace it")
			continue
		}
		// Cooling a node over a high threshold may undo a move older than
		// evictionCooldown: a node hot with a pod moved onto it is relieved
		// of it once the others (moved last) could not cool it. Holding it
		// for balanceCooldown kept spiking pods on hot nodes and sent
		// their neighbours away instead (docs/descheduler.md).
		guard := p.args.EvictionCooldown.Duration
		if s.MovedOnto(wl, node.Name, time.Time{}, c.now, guard) || s.Bounced(wl, node.Name, c.now, guard) {
			p.skip(podLogger, balance.SkipCooldown, "workload was moved onto this node, or its replacement landed back here, within the cooldown", "workload", wl,
				"cooldown", guard)
			continue
		}
		undoes := func(dest string) bool { return s.MovedOff(wl, dest, c.now, guard) }
		// A node over the scheduler's thresholds gets no new pod and its
		// pods suffer: they may go to any node that stays under its limits.
		// Otherwise to cool nodes only, so that relieving one node does not
		// warm another towards hot. Wherever it goes, a destination must
		// stay under the high thresholds with the pod.
		rules := destinationRules{undoes: undoes, low: p.args.LowThresholds, high: p.args.HighThresholds}
		candidates := job.to.cool
		if len(p.Deps.Model.SchedulerThresholds().Above(c.loads[node.Name])) > 0 {
			candidates, rules.low = job.to.relief, nil
		}
		dest, why := pickDestination(ctx, pod, amounts[pod], node.Name, candidates, rules, c.loads, c.unsampled, p.Deps.Model, p.Fit())
		if dest == nil {
			p.skip(podLogger, balance.SkipNoDestination, "no node can take the pod", "rejected", why)
			continue
		}
		destinationLoad := p.Deps.Model.Share(amounts[pod], dest.Node)
		because := overLimits(over, c.loads[node.Name], p.args.HighThresholds)
		note := moveNote(because, over, c.loads[node.Name], node.Name, dest.Node.Name,
			c.loads[node.Name].Add(shares[pod], -1), c.loads[dest.Node.Name].Add(destinationLoad, 1))
		_, stop := p.move(ctx, podLogger, c, eviction{pod: pod, workload: wl, source: node, destination: dest.Node, score: dest.Score,
			sourceLoad: shares[pod], destinationLoad: destinationLoad, note: note,
			reason:       eventReason(over, c.loads[node.Name], job.limit, node.Name, dest.Node.Name),
			metricReason: evictionReason(over)})
		if stop {
			return
		}
	}
}

// eviction is one move: a pod off its node, to the destination expected
// to take its replacement.
type eviction struct {
	pod                 *v1.Pod
	workload            balance.Workload
	source, destination *v1.Node
	// score is the destination's score by the scheduler's model, logged.
	score int64
	// sourceLoad and destinationLoad are the pod's share of each node.
	sourceLoad, destinationLoad balance.NodeLoad
	// note says why, for the event and `ballast explain`; reason is the
	// eviction's reason and metricReason the reason label of the metric.
	note, reason, metricReason string
	// planned is set for a move of the plan, which is remembered as a
	// move for balance; other moves cool a hot node.
	planned bool
}

// move makes e: a rollout of a one-replica Deployment where surgeSingleReplica
// asks for it, an eviction otherwise (or only logs it in a dry run), and
// remembers it. It reports whether the pod moved, and whether the node
// should be left alone for the rest of the cycle (a refusal at a limit).
func (p *LoadAwareBalance) move(ctx context.Context, logger klog.Logger, c *cycle, e eviction) (moved, stop bool) {
	s := p.Deps.Store
	pod := e.pod
	if !p.Handle.Evictor().PreEvictionFilter(pod) {
		p.skip(logger, balance.SkipFiltered, "pre-eviction filter refused the pod")
		return false, false
	}
	note := e.note
	surge, only := p.surgeTarget(ctx, logger, pod)
	if only && surge == nil {
		p.skip(logger, balance.SkipFiltered, "its workload's only pod, which a rollout cannot move with a Ready pod throughout; evicting it would leave the workload down")
		return false, false
	}
	if surge != nil {
		note += fmt.Sprintf("; by a rollout of Deployment %s, its replacement Ready before the pod stops", surge.Name)
	}
	dest := e.destination.Name
	existed := balance.WorkloadPods(ctx, p.Handle, pod, e.workload)
	switch {
	case p.args.DryRun && surge != nil:
		logger.Info("Would move pod by a rollout of its Deployment (dry run)", "deployment", klog.KObj(surge), "destination", dest,
			"score", e.score, "why", note)
	case p.args.DryRun:
		logger.Info("Would evict pod (dry run)", "reason", e.reason, "destination", dest, "score", e.score, "why", note)
	case surge != nil:
		if err := balance.Surge(ctx, p.Handle.ClientSet(), surge, c.now); err != nil {
			p.skip(logger, balance.SkipEvictionError, "rollout failed; trying the next pod", "err", err.Error())
			return false, false
		}
		logger.Info("Moved pod by a rollout of its Deployment", "deployment", klog.KObj(surge), "destination", dest,
			"score", e.score, "why", note)
		p.Deps.Metrics.SurgeMoves.WithLabelValues(PluginName, e.source.Name).Inc()
		if p.Deps.Events != nil {
			p.Deps.Events.Eventf(pod, nil, v1.EventTypeNormal, balance.ReasonMoved, "Descheduled", "%s", note)
		}
	default:
		if err := p.Handle.Evictor().Evict(ctx, pod, evictions.EvictOptions{StrategyName: PluginName, Reason: e.reason}); err != nil {
			return false, p.evictionFailed(logger, c, err)
		}
		logger.Info("Evicted pod", "reason", e.reason, "destination", dest, "score", e.score, "why", note)
		p.Deps.Metrics.Evictions.WithLabelValues(PluginName, e.metricReason, e.source.Name).Inc()
		if p.Deps.Events != nil {
			p.Deps.Events.Eventf(pod, nil, v1.EventTypeNormal, balance.ReasonMoved, "Descheduled", "%s", note)
		}
	}
	sourceUsage, destinationUsage := c.loads[e.source.Name], c.loads[dest]
	c.loads[e.source.Name] = c.loads[e.source.Name].Add(e.sourceLoad, -1)
	c.loads[dest] = c.loads[dest].Add(e.destinationLoad, 1)
	c.byNode[e.source.Name]++
	c.evicted++
	c.byNamespace[pod.Namespace]++
	if !p.args.DryRun {
		if e.planned {
			s.Remember(e.workload, pod.UID, e.source.Name, dest, c.now, e.sourceLoad, e.destinationLoad)
		} else {
			s.RememberCooling(e.workload, pod.UID, e.source.Name, dest, c.now, e.sourceLoad, e.destinationLoad)
		}
		s.Existed(pod.UID, existed)
		s.Note(pod.UID, note, sourceUsage, destinationUsage)
	}
	return true, false
}

// minRelief is the least share of a node, in percentage points of one
// resource over its limit, that a pod must free to be moved for it: below
// the tenth of a percent every figure of a move is reported in, the move
// would restart the pod and change nothing the user can see (an idle pod on
// a node hot on CPU, once a move for memory has brought memory under).
const minRelief = 0.1

// relieves reports whether a pod whose share of the node is share frees at
// least minRelief of one of the resources over the limit.
func relieves(share balance.NodeLoad, over []usage.Resource) bool {
	for _, r := range over {
		if share[r] >= minRelief {
			return true
		}
	}
	return false
}

// surgeTarget returns, with SurgeSingleReplica, the Deployment to roll out
// to move pod with a Ready pod throughout, nil to evict it; and whether pod
// is its controller's only pod, which the chart then lets through the
// evictor's minReplicas for this plugin to move by a rollout or not at all.
func (p *LoadAwareBalance) surgeTarget(ctx context.Context, logger klog.Logger, pod *v1.Pod) (*appsv1.Deployment, bool) {
	if !*p.args.SurgeSingleReplica || p.Handle.ClientSet() == nil {
		return nil, false
	}
	only := p.onlyPod(logger, pod)
	d, whyNot, err := balance.SurgeTarget(ctx, p.Handle.ClientSet(), pod)
	if err != nil {
		logger.Error(err, "Cannot tell whether a rollout would move the pod with a Ready pod throughout; not moving it by one")
		return nil, only
	}
	if d == nil && whyNot != "" {
		logger.V(3).Info("Not moving the pod by a rollout", "because", whyNot)
	}
	return d, only
}

// onlyPod reports whether pod is the only pod of its controller, as the
// descheduler's minReplicas counts them; true when they cannot be counted.
func (p *LoadAwareBalance) onlyPod(logger klog.Logger, pod *v1.Pod) bool {
	if p.replicas == nil || metav1.GetControllerOf(pod) == nil {
		return false
	}
	n, ok := p.countReplicas(logger, pod)
	return !ok || n <= 1
}

// countReplicas counts the pods of pod's controller from the informer's
// owner index, and reports whether it could.
func (p *LoadAwareBalance) countReplicas(logger klog.Logger, pod *v1.Pod) (int, bool) {
	if p.replicas == nil {
		return 0, false
	}
	n, err := p.replicas.Replicas(pod)
	if err != nil {
		logger.Error(err, "Counting the pods of the pod's controller")
		return 0, false
	}
	return n, true
}

// goal is what a hot node is brought under: its limit, except for a resource
// that its pods cannot bring under it, however many move (a process outside
// Kubernetes uses most of the node): there the node sheds pods only until it
// is under the scheduler's threshold, where the scheduler would place pods on
// it again, and no further, so that the moves are not undone by the next
// placements; a node over the scheduler's threshold with no pod at all
// sheds every pod it can.
func (p *LoadAwareBalance) goal(logger klog.Logger, load balance.NodeLoad, limit balance.ResourceThresholds,
	pods []*v1.Pod, shares map[*v1.Pod]balance.NodeLoad) balance.ResourceThresholds {
	floor := maps.Clone(load)
	for _, pod := range pods {
		floor = floor.Add(shares[pod], -1)
	}
	scheduler := p.Deps.Model.SchedulerThresholds()
	var out balance.ResourceThresholds
	for r, v := range limit {
		// Only a resource over its high threshold: a limit lowered to the
		// mean plus the deviation is balance, which stops where it stops.
		if high, ok := p.args.HighThresholds[r]; !ok || load[r] <= high || floor[r] <= v {
			continue
		}
		if out == nil {
			out = maps.Clone(limit)
		}
		if st, ok := scheduler[r]; ok && st > v && st > floor[r] {
			out[r] = st
		}
	}
	if out == nil {
		return limit
	}
	logger.Info("Node cannot get under its high thresholds by moving pods; shedding pods until the scheduler would place pods on it again",
		"withoutItsPods", floor, "limit", limit, "goal", out)
	return out
}

// evictionFailed accounts for a refused eviction and reports whether the
// node should be left alone for this cycle.
func (p *LoadAwareBalance) evictionFailed(logger klog.Logger, c *cycle, err error) bool {
	var nodeLimit *evictions.EvictionNodeLimitError
	var totalLimit *evictions.EvictionTotalLimitError
	var nsLimit *evictions.EvictionNamespaceLimitError
	switch {
	case errors.As(err, &totalLimit):
		p.skip(logger, balance.SkipLimit, "descheduler's total eviction limit reached")
		c.stopped = true
		return true
	case errors.As(err, &nodeLimit):
		p.skip(logger, balance.SkipLimit, "descheduler's node eviction limit reached")
		return true
	case errors.As(err, &nsLimit):
		p.skip(logger, balance.SkipLimit, "descheduler's namespace eviction limit reached")
	case isDisruptionRefusal(err):
		// 429 from the Eviction API: a PodDisruptionBudget forbids it now.
		p.skip(logger, balance.SkipPDB, "eviction refused by a disruption budget; trying the next pod", "err", err.Error())
	default:
		p.skip(logger, balance.SkipEvictionError, "eviction failed; trying the next pod", "err", err.Error())
	}
	return false
}

// isDisruptionRefusal recognises the Eviction API's 429. The descheduler's
// evictor flattens the API error into text, so the text is all there is.
func isDisruptionRefusal(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "disruption budget") || strings.Contains(msg, "(ignoring)") || strings.Contains(msg, "Too Many Requests")
}

func (p *LoadAwareBalance) skip(logger klog.Logger, reason, msg string, kv ...any) {
	p.Deps.Metrics.SkippedCandidates.WithLabelValues(PluginName, reason).Inc()
	logger.V(2).Info("Skipping eviction candidate: "+msg, append([]any{"skipReason", reason}, kv...)...)
}

// eventReason says why the pod is evicted and where it should go, short
// enough for an event's reason and free of format verbs, e.g.
// "memory 95 over 85 pct on node-a; expected destination node-b".
func eventReason(over []usage.Resource, load balance.NodeLoad, high balance.ResourceThresholds, source, dest string) string {
	parts := make([]string, len(over))
	for i, r := range over {
		parts[i] = fmt.Sprintf("%s %.0f over %g pct", r, load[r], high[r])
	}
	s := fmt.Sprintf("%s on %s; expected destination %s", strings.Join(parts, ", "), source, dest)
	if len(s) > maxEventReason {
		s = s[:maxEventReason]
	}
	return s
}

// moveNote says why a pod moves off source (why: overLimits)
// and what the move is expected to make of both nodes: the expected
// destination, and both nodes' usage of the resources in over after.
func moveNote(why []string, over []usage.Resource, load balance.NodeLoad, source, dest string, sourceAfter, destAfter balance.NodeLoad) string {
	after := make([]string, 0, 2*len(over))
	for _, r := range over {
		after = append(after, fmt.Sprintf("%s %s %.1f%% → %.1f%%", source, r, load[r], sourceAfter[r]))
	}
	for _, r := range over {
		after = append(after, fmt.Sprintf("%s %s %.1f%%", dest, r, destAfter[r]))
	}
	return fmt.Sprintf("Moved off %s by LoadAwareBalance: %s; expected destination %s; expected after the move: %s",
		source, strings.Join(why, ", "), dest, strings.Join(after, ", "))
}

// overLimits says, for each resource in over, how far load is over its
// high threshold.
func overLimits(over []usage.Resource, load balance.NodeLoad, high balance.ResourceThresholds) []string {
	parts := make([]string, len(over))
	for i, r := range over {
		parts[i] = fmt.Sprintf("%s %.1f%% over its high threshold %.1f%%", r, load[r], high[r])
	}
	return parts
}

// evictionReason is the reason label of an eviction off a hot node:
// hot-<resources over their high thresholds>. Moves by plan are "plan".
func evictionReason(over []usage.Resource) string {
	return "hot-" + joinResources(over)
}

func joinResources(rs []usage.Resource) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r)
	}
	return strings.Join(parts, "-")
}

func maxExcess(t balance.ResourceThresholds, l balance.NodeLoad) float64 {
	var m float64
	for r, limit := range t {
		m = max(m, l[r]-limit)
	}
	return m
}
