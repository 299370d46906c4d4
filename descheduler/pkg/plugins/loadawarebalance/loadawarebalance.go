package loadawarebalance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

// PluginName is the name of the plugin in a descheduler policy.
const PluginName = "LoadAwareBalance"

// maxEventReason is the longest reason an event may carry.
const maxEventReason = 128

var _ frameworktypes.BalancePlugin = &LoadAwareBalance{}

// Deps are what the plugin needs from the binary that hosts it.
type Deps struct {
	// Usage supplies real node usage. Required.
	Usage SnapshotSource
	// Model is the scheduler's load model. Required.
	Model LoadModel
	// Metrics receives the plugin's metrics; nil records none.
	Metrics *Metrics
	// Clock defaults to the real clock.
	Clock clock.PassiveClock
	// Store keeps memory across cycles; nil gives every plugin instance its
	// own. The descheduler builds plugins once per process, so instance
	// memory lasts as long as the process.
	Store *Store
}

// LoadAwareBalance evicts pods from nodes hot by real usage when a cool node
// can take them, and remembers its moves so they are not undone.
type LoadAwareBalance struct {
	logger    klog.Logger
	handle    frameworktypes.Handle
	args      *LoadAwareBalanceArgs
	deps      Deps
	podFilter podutil.FilterFunc
	// placedByBallast accepts the pods of args.SchedulerNames.
	placedByBallast podutil.FilterFunc
}

// NewBuilder returns the descheduler plugin builder for LoadAwareBalance
// bound to deps.
func NewBuilder(deps Deps) pluginregistry.PluginBuilder {
	return func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
		return New(ctx, args, handle, deps)
	}
}

// New builds the plugin from its args.
func New(ctx context.Context, args runtime.Object, handle frameworktypes.Handle, deps Deps) (*LoadAwareBalance, error) {
	lbArgs, ok := args.(*LoadAwareBalanceArgs)
	if !ok {
		return nil, fmt.Errorf("want args to be of type LoadAwareBalanceArgs, got %T", args)
	}
	if err := ValidateLoadAwareBalanceArgs(lbArgs); err != nil {
		return nil, fmt.Errorf("invalid %s args: %w", PluginName, err)
	}
	lbArgs = lbArgs.DeepCopy()
	SetDefaults_LoadAwareBalanceArgs(lbArgs)
	deps, err := deps.Complete(PluginName)
	if err != nil {
		return nil, err
	}
	podFilter, err := NewPodFilter(handle, lbArgs.Namespaces, PluginName)
	if err != nil {
		return nil, err
	}
	return &LoadAwareBalance{
		logger:          klog.FromContext(ctx).WithValues("plugin", PluginName),
		handle:          handle,
		args:            lbArgs,
		deps:            deps,
		podFilter:       podFilter,
		placedByBallast: PlacedBy(lbArgs.SchedulerNames),
	}, nil
}

// Name returns the plugin name.
func (p *LoadAwareBalance) Name() string { return PluginName }

// cycle is the state of one Balance call.
type cycle struct {
	now         time.Time
	loads       map[string]NodeLoad
	evicted     int32
	byNamespace map[string]int32
	stopped     bool
}

// Balance runs one descheduling cycle.
func (p *LoadAwareBalance) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	logger := p.logger.WithValues("ExtensionPoint", frameworktypes.BalanceExtensionPoint)
	s := p.deps.Store
	s.mu.Lock()
	defer s.mu.Unlock()

	c := &cycle{now: p.deps.Clock.Now(), loads: map[string]NodeLoad{}, byNamespace: map[string]int32{}}
	s.Expire(c.now, max(p.args.EvictionCooldown.Duration, p.args.Window.Duration))
	p.countPingPong(logger, s)

	snap := p.deps.Usage.Snapshot()
	window := usage.Window(p.args.Window.Duration)
	present := map[string]bool{}
	var hot, cool []*v1.Node
	for _, n := range nodes {
		present[n.Name] = true
		load, ok := ReadLoad(snap, n.Name, window, p.args.HighThresholds, p.args.LowThresholds)
		if !ok {
			// Unknown usage is neither hot nor a destination.
			s.streaks.observe(n.Name, false)
			p.deps.Metrics.SkippedCandidates.WithLabelValues(PluginName, skipStale).Inc()
			logger.V(3).Info("Node has no fresh usage; neither hot nor a destination", "node", klog.KObj(n))
			continue
		}
		load = load.Add(s.InFlight(n.Name, snap.Nodes[n.Name].SampleTime, window.Duration()), 1)
		c.loads[n.Name] = load
		streak := s.streaks.observe(n.Name, len(p.args.HighThresholds.Above(load)) > 0)
		switch {
		case streak >= *p.args.ConsecutiveHotCycles:
			hot = append(hot, n)
		case streak > 0:
			logger.V(2).Info("Node above a high threshold, not hot yet", "node", klog.KObj(n), "cycles", streak, "needed", *p.args.ConsecutiveHotCycles, "usage", load)
		case p.args.LowThresholds.AllBelow(load):
			cool = append(cool, n)
		}
	}
	s.streaks.retain(present)
	p.deps.Metrics.HotNodes.WithLabelValues(PluginName).Set(float64(len(hot)))
	if len(c.loads) == 0 {
		logger.Info("Usage is stale or missing for every node; evicting nothing this cycle", "nodes", len(nodes))
		return nil
	}
	if len(hot) == 0 {
		return nil
	}
	// The hottest node first: it needs the cool capacity most.
	slices.SortStableFunc(hot, func(a, b *v1.Node) int {
		return compareExcess(p.args.HighThresholds, c.loads[b.Name], c.loads[a.Name])
	})
	for _, n := range hot {
		if c.stopped {
			break
		}
		p.balanceNode(ctx, logger, c, n, cool)
	}
	return nil
}

// balanceNode evicts pods from one hot node until its projected usage is
// under every high threshold, a limit is reached or no candidate can move.
func (p *LoadAwareBalance) balanceNode(ctx context.Context, logger klog.Logger, c *cycle, node *v1.Node, cool []*v1.Node) {
	s := p.deps.Store
	logger = logger.WithValues("node", klog.KObj(node))
	pods, err := podutil.ListPodsOnANode(node.Name, p.handle.GetPodsAssignedToNodeFunc(), p.podFilter)
	if err != nil {
		logger.Error(err, "Listing pods of a hot node")
		return
	}
	hotResources := p.args.HighThresholds.Above(c.loads[node.Name])
	logger.Info("Node is hot", "resources", hotResources, "usage", c.loads[node.Name], "evictable", len(pods))
	sortCandidates(pods, func(pod *v1.Pod) float64 {
		share := p.deps.Model.PodLoad(pod, node)
		var sum float64
		for _, r := range hotResources {
			sum += share[r]
		}
		return sum
	})
	var fromNode int32
	for _, pod := range pods {
		over := p.args.HighThresholds.Above(c.loads[node.Name])
		if len(over) == 0 {
			logger.V(2).Info("Projected usage under the high thresholds", "usage", c.loads[node.Name])
			return
		}
		if fromNode >= *p.args.MaxEvictionsPerNode {
			logger.V(2).Info("Eviction limit per node reached", "limit", *p.args.MaxEvictionsPerNode)
			return
		}
		if c.evicted >= *p.args.MaxEvictionsPerCycle {
			logger.V(2).Info("Eviction limit per cycle reached", "limit", *p.args.MaxEvictionsPerCycle)
			c.stopped = true
			return
		}
		podLogger := logger.WithValues("pod", klog.KObj(pod))
		if !p.placedByBallast(pod) {
			p.skip(podLogger, skipOtherScheduler, "pod is placed by another scheduler, which would not place its replacement by real usage",
				"schedulerName", pod.Spec.SchedulerName)
			continue
		}
		if c.byNamespace[pod.Namespace] >= *p.args.MaxEvictionsPerNamespace {
			p.skip(podLogger, skipLimit, "namespace eviction limit reached")
			continue
		}
		wl, ok := WorkloadOf(pod)
		if !ok {
			p.skip(podLogger, skipFiltered, "pod has no controller to replace it")
			continue
		}
		if s.InCooldown(wl, node.Name, c.now, p.args.EvictionCooldown.Duration) {
			p.skip(podLogger, skipCooldown, "workload was moved off this node within the cooldown", "workload", wl)
			continue
		}
		dest, why := pickDestination(ctx, pod, node.Name, cool, c.loads, p.args, p.deps.Model, p.handle.GetPodsAssignedToNodeFunc())
		if dest == nil {
			p.skip(podLogger, skipNoDestination, "no cool node can take the pod", "rejected", why)
			continue
		}
		if !p.handle.Evictor().PreEvictionFilter(pod) {
			p.skip(podLogger, skipFiltered, "pre-eviction filter refused the pod")
			continue
		}
		reason := eventReason(over, c.loads[node.Name], p.args.HighThresholds, node.Name, dest.node.Name)
		if p.args.DryRun {
			podLogger.Info("Would evict pod (dry run)", "reason", reason, "destination", dest.node.Name, "score", dest.score)
		} else if err := p.handle.Evictor().Evict(ctx, pod, evictions.EvictOptions{StrategyName: PluginName, Reason: reason}); err != nil {
			if stop := p.evictionFailed(podLogger, c, err); stop {
				return
			}
			continue
		} else {
			podLogger.Info("Evicted pod", "reason", reason, "destination", dest.node.Name, "score", dest.score)
			p.deps.Metrics.Evictions.WithLabelValues(PluginName, "hot-"+joinResources(over), node.Name).Inc()
		}
		m := &move{
			workload: wl, source: node.Name, destination: dest.node.Name, at: c.now,
			sourceLoad:      p.deps.Model.PodLoad(pod, node),
			destinationLoad: p.deps.Model.PodLoad(pod, dest.node),
		}
		c.loads[node.Name] = c.loads[node.Name].Add(m.sourceLoad, -1)
		c.loads[dest.node.Name] = c.loads[dest.node.Name].Add(m.destinationLoad, 1)
		fromNode++
		c.evicted++
		c.byNamespace[pod.Namespace]++
		if !p.args.DryRun {
			s.remember(m)
		}
	}
}

// evictionFailed accounts for a refused eviction and reports whether the
// node should be left alone for this cycle.
func (p *LoadAwareBalance) evictionFailed(logger klog.Logger, c *cycle, err error) bool {
	var nodeLimit *evictions.EvictionNodeLimitError
	var totalLimit *evictions.EvictionTotalLimitError
	var nsLimit *evictions.EvictionNamespaceLimitError
	switch {
	case errors.As(err, &totalLimit):
		p.skip(logger, skipLimit, "descheduler's total eviction limit reached")
		c.stopped = true
		return true
	case errors.As(err, &nodeLimit):
		p.skip(logger, skipLimit, "descheduler's node eviction limit reached")
		return true
	case errors.As(err, &nsLimit):
		p.skip(logger, skipLimit, "descheduler's namespace eviction limit reached")
	case isDisruptionRefusal(err):
		// 429 from the Eviction API: a PodDisruptionBudget forbids it now.
		p.skip(logger, skipPDB, "eviction refused by a disruption budget; trying the next pod", "err", err.Error())
	default:
		p.skip(logger, skipEvictionError, "eviction failed; trying the next pod", "err", err.Error())
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
	p.deps.Metrics.SkippedCandidates.WithLabelValues(PluginName, reason).Inc()
	logger.V(2).Info("Skipping eviction candidate: "+msg, append([]any{"skipReason", reason}, kv...)...)
}

// countPingPong records replacements that landed back on their source node.
func (p *LoadAwareBalance) countPingPong(logger klog.Logger, s *Store) {
	podsOn := func(node string) []*v1.Pod {
		pods, err := p.handle.GetPodsAssignedToNodeFunc()(node, nil)
		if err != nil {
			logger.Error(err, "Listing pods for ping-pong detection", "node", node)
		}
		return pods
	}
	for node, n := range s.LandedBack(podsOn) {
		logger.Info("Replacement of a moved pod landed back on its source node", "node", node, "pods", n)
		p.deps.Metrics.PingPong.WithLabelValues(PluginName, node).Add(float64(n))
	}
}

// eventReason says why the pod is evicted and where it should go, short
// enough for an event's reason and free of format verbs, e.g.
// "memory 95 over 85 pct on node-a; expected destination node-b".
func eventReason(over []usage.Resource, load NodeLoad, high ResourceThresholds, source, dest string) string {
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

func joinResources(rs []usage.Resource) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = string(r)
	}
	return strings.Join(parts, "-")
}

// compareExcess orders two loads by their largest excess over the thresholds.
func compareExcess(t ResourceThresholds, a, b NodeLoad) int {
	ea, eb := maxExcess(t, a), maxExcess(t, b)
	switch {
	case ea < eb:
		return -1
	case ea > eb:
		return 1
	}
	return 0
}

func maxExcess(t ResourceThresholds, l NodeLoad) float64 {
	var m float64
	for r, limit := range t {
		m = max(m, l[r]-limit)
	}
	return m
}
