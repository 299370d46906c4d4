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
	// limits are the thresholds each node is held under: HighThresholds,
	// lowered to the cluster mean plus DeviationThresholds when set.
	limits map[string]balance.ResourceThresholds
	// unsampled is what the pods that started on each destination add
	// that its window does not show yet (balance.Plugin.Unsampled): the
	// scheduler counts them, so a destination is judged with them.
	unsampled map[string]balance.NodeLoad
	// shares are each node's share of the cluster's size (sizeShares).
	shares map[string]float64
	// mean is the cluster's mean usage when the cycle began.
	mean balance.NodeLoad
	// swings are how far each cool node's window peak is above its load.
	swings      map[string]balance.NodeLoad
	evicted     int32
	byNode      map[string]int32
	byNamespace map[string]int32
	stopped     bool
	// replicas are the workloads' pods as the cycle first counted them
	// (replicaCount).
	replicas map[balance.Workload]int
	// hot are the nodes that shed as hot this cycle.
	hot map[string]bool
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
		byNode: map[string]int32{}, byNamespace: map[string]int32{}, shares: sizeShares(nodes), swings: map[string]balance.NodeLoad{},
		replicas: map[balance.Workload]int{}, hot: map[string]bool{}}
	s.Expire(c.now, max(p.args.BalanceCooldown.Duration, p.args.Window.Duration))
	p.Deps.FollowReplacements(logger, p.Handle, PluginName, nodes)

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
		limit := p.limit(mean)
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
			if !calm {
				continue
			}
			dests.relief = append(dests.relief, n)
			if p.args.LowThresholds.AllBelow(load) && p.belowMean(load, mean) {
				dests.cool = append(dests.cool, n)
				c.swings[n.Name] = peak.Add(load, -1)
			}
		}
	}
	s.SetCool(c.loads, p.args.LowThresholds)
	s.RetainHot(present)
	p.WarnGrowth(logger, nodes)
	p.Deps.Metrics.HotNodes.WithLabelValues(PluginName).Set(float64(len(hot)))
	if len(c.loads) == 0 {
		logger.Info("Usage is stale or missing for every node; evicting nothing this cycle", "nodes", len(nodes))
		return nil
	}
	if len(hot) == 0 && !p.anyFarBelow(c, dests.cool) {
		return nil
	}
	c.unsampled = map[string]balance.NodeLoad{}
	for _, n := range dests.relief {
		c.unsampled[n.Name] = p.Unsampled(ctx, n, snap.Nodes[n.Name].SampleTime, window.Duration())
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
	p.pull(ctx, logger, c, nodes, dests.cool)
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

// shedding is what one node sheds pods towards this cycle.
type shedding struct {
	// limit is what the node is brought under: its limit, or for a pull
	// the cluster's mean on the pulled resources.
	limit balance.ResourceThresholds
	// to are the destinations; for a pull, the nodes far below the mean
	// that pull the pods, each kept under limit with the pod.
	to destinations
	// pull says the node sheds because nodes far below the mean pull.
	pull bool
}

// pull is the band's lower edge: a node more than the deviation below the
// cluster's mean on some resource (a node back from maintenance, one that
// joined, a big node beside many small ones) takes pods from the nodes above
// the mean on that resource, busiest first, until they reach the mean or it
// does. Nodes above the mean plus the deviation have shed first; a pull moves
// pods for balance, under the same rules, paced by the workload's rolling
// update rather than by balanceCooldown (Store.MovesNow). A node that shed
// as hot this cycle is a source too, usually the first: the pods balancing
// could not move off it for the budget a pull may take, and the node
// furthest above the mean is the one a new node should relieve. Another
// node over its limit is not: over it for fewer than consecutiveHotCycles
// (it may be a spike), or cooling by itself (stillOver).
func (p *LoadAwareBalance) pull(ctx context.Context, logger klog.Logger, c *cycle, nodes []*v1.Node, cool []*v1.Node) {
	if c.stopped {
		return
	}
	var under []*v1.Node
	pulled := map[usage.Resource]bool{}
	for _, n := range cool {
		rs := p.farBelow(c, n)
		if len(rs) == 0 {
			continue
		}
		under = append(under, n)
		for _, r := range rs {
			pulled[r] = true
		}
	}
	if len(under) == 0 {
		return
	}
	limit := p.limit(c.mean)
	for r := range pulled {
		limit[r] = min(limit[r], c.mean[r])
	}
	var sources []*v1.Node
	for _, n := range nodes {
		load, ok := c.loads[n.Name]
		if !ok || (len(c.limits[n.Name].Above(load)) > 0 && !c.hot[n.Name]) || len(limit.Above(load)) == 0 || slices.Contains(under, n) {
			continue
		}
		sources = append(sources, n)
	}
	slices.SortStableFunc(sources, func(a, b *v1.Node) int {
		return cmp.Or(cmp.Compare(maxExcess(limit, c.loads[b.Name]), maxExcess(limit, c.loads[a.Name])), cmp.Compare(a.Name, b.Name))
	})
	logger.V(2).Info("Nodes far below the cluster's mean pull pods from nodes above it", "pulling", klog.KObjSlice(under), "mean", c.mean,
		"sources", len(sources))
	for _, n := range sources {
		if c.stopped {
			return
		}
		p.balanceNode(ctx, logger, c, n, shedding{limit: limit, to: destinations{cool: under}, pull: true})
	}
}

// farBelow returns the resources on which node is more than its deviation
// below the cluster's mean, even at its window peak, if it can take pods
// (not cordoned) and its peak on no resource is above the mean plus the
// deviation. A node whose load comes and goes (a backup job outside
// Kubernetes) is not underused between two peaks: its room is taken again
// at the next, and the pods it would pull raise those peaks. A node that
// pulled pods within evictionCooldown (Store.Pulling) pulls on while it is
// below the mean at all: pulling stops at the mean, not at the band's edge,
// which would leave the node that joined or came back as far below the
// others as the deviation.
func (p *LoadAwareBalance) farBelow(c *cycle, node *v1.Node) []usage.Resource {
	swing, ok := c.swings[node.Name]
	if node.Spec.Unschedulable || !ok {
		return nil
	}
	pulling := p.Deps.Store.Pulling(node.Name, c.now, p.args.EvictionCooldown.Duration)
	load := c.loads[node.Name]
	var out []usage.Resource
	for _, r := range slices.Sorted(maps.Keys(p.args.DeviationThresholds)) {
		deviation := p.args.DeviationThresholds[r]
		if load[r]+swing[r] > c.mean[r]+deviation {
			return nil
		}
		edge := c.mean[r] - deviation
		if pulling {
			edge = c.mean[r]
		}
		if load[r]+swing[r] < edge {
			out = append(out, r)
		}
	}
	return out
}

func (p *LoadAwareBalance) anyFarBelow(c *cycle, nodes []*v1.Node) bool {
	return slices.ContainsFunc(nodes, func(n *v1.Node) bool { return len(p.farBelow(c, n)) > 0 })
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

// limit is the thresholds a node is held under this cycle: HighThresholds,
// each lowered to the cluster mean plus its DeviationThresholds when set.
func (p *LoadAwareBalance) limit(mean balance.NodeLoad) balance.ResourceThresholds {
	out := make(balance.ResourceThresholds, len(p.args.HighThresholds)+len(p.args.DeviationThresholds))
	for r, v := range p.args.HighThresholds {
		out[r] = v
	}
	for r, d := range p.args.DeviationThresholds {
		if high, ok := out[r]; !ok || mean[r]+d < high {
			out[r] = mean[r] + d
		}
	}
	return out
}

// belowMean reports whether load is under the cluster mean for every
// resource with a deviation threshold: only such nodes receive pods moved
// for balance.
func (p *LoadAwareBalance) belowMean(load, mean balance.NodeLoad) bool {
	for r := range p.args.DeviationThresholds {
		if !(load[r] < mean[r]) {
			return false
		}
	}
	return true
}

// narrows reports whether moving a pod that takes fromSource off the source
// and adds toDest to the destination brings the two nodes closer together:
// the sum over the resources with a deviation threshold of the squared
// difference between them shrinks. Moving a pod larger than the gap only
// makes the destination the busier of the two (a 1.2-core media server
// between two 4-core Pis 16 points apart), and the next cycle would move it
// back.
func (p *LoadAwareBalance) narrows(source, dest, fromSource, toDest balance.NodeLoad) bool {
	var before, after float64
	for r := range p.args.DeviationThresholds {
		gap := source[r] - dest[r]
		moved := (source[r] - fromSource[r]) - (dest[r] + toDest[r])
		before += gap * gap
		after += moved * moved
	}
	return after < before
}

// replicasOn counts the pods of workload w on node. A balance move goes
// only to a node holding fewer of them than the source, or no more than
// its size's share (takesReplica): kube-scheduler spreads a workload's
// replicas over nodes (PodTopologySpread's system default), and a node that
// fails takes its replicas with it.
func (p *LoadAwareBalance) replicasOn(node string, w balance.Workload) int {
	pods, err := p.PodsOn(node, func(pod *v1.Pod) bool {
		pw, ok := balance.WorkloadOf(pod)
		return ok && pw == w
	})
	if err != nil {
		return 0
	}
	return len(pods)
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

// balanceNode evicts pods from one node until its projected usage is under
// job's limit (for a hot node, its goal), a limit is reached or no
// candidate can move.
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
	if job.pull {
		logger.Info("Node above the cluster's mean while nodes far below it pull pods", "resources", hotResources, "usage", c.loads[node.Name],
			"mean", c.mean, "evictable", len(pods))
	} else {
		logger.Info("Node is hot", "resources", hotResources, "usage", c.loads[node.Name], "evictable", len(pods))
	}
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
	sortCandidates(pods, func(pod *v1.Pod) float64 {
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
		// evictionCooldown; balancing never undoes one within balanceCooldown.
		balancing := len(p.args.HighThresholds.Above(c.loads[node.Name])) == 0
		guard := p.args.EvictionCooldown.Duration
		if balancing {
			guard = p.args.BalanceCooldown.Duration
		}
		if s.MovedOnto(wl, node.Name, c.now, guard) || s.Bounced(wl, node.Name, c.now, p.args.EvictionCooldown.Duration) {
			p.skip(podLogger, balance.SkipCooldown, "workload was moved onto this node, or its replacement landed back here, within the cooldown", "workload", wl,
				"cooldown", guard)
			continue
		}
		// Every move restarts a pod: balancing moves a workload
		// balance.BalanceMoves times per balanceCooldown at most; a node
		// over a high threshold sheds its pods whenever they must go. A
		// node far below the mean (one that joined or came back) is a
		// change in the cluster that lasts: it pulls a workload at the pace
		// of its rolling update, balance.BalanceMoves of its pods a cycle,
		// still never off a node the workload was moved onto nor back
		// where it was moved off within balanceCooldown.
		var replicas int
		if balancing {
			replicas = p.replicaCount(podLogger, c, wl, pod)
			switch {
			case job.pull && s.MovesNow(wl, c.now) >= balance.BalanceMoves(replicas):
				p.skip(podLogger, balance.SkipCooldown, "workload had as many pods moved this cycle as its rolling update restarts at once", "workload", wl,
					"perCycle", balance.BalanceMoves(replicas))
				continue
			case !job.pull && s.OutOfBalanceMoves(wl, replicas, node.Name, c.now, p.args.BalanceCooldown.Duration):
				p.skip(podLogger, balance.SkipCooldown, "workload was moved off other nodes within the balance cooldown as often as balancing moves it", "workload", wl,
					"cooldown", p.args.BalanceCooldown.Duration, "perCooldown", balance.BalanceMoves(replicas))
				continue
			}
		}
		undoes := func(dest string) bool { return s.MovedOff(wl, dest, c.now, guard) }
		var narrows func(*v1.Node) bool
		if balancing {
			// Above the mean only: balance, which a move that swaps the
			// roles of the two nodes does not improve, nor one that
			// kube-scheduler's replica spreading would undo.
			onSource := p.replicasOn(node.Name, wl)
			narrows = func(dest *v1.Node) bool {
				return p.narrows(c.loads[node.Name], c.loads[dest.Name], shares[pod], p.Deps.Model.Share(amounts[pod], dest)) &&
					takesReplica(p.replicasOn(dest.Name, wl), onSource, replicas, c.shares[dest.Name])
			}
		}
		// A node over the scheduler's thresholds gets no new pod and its
		// pods suffer: they may go to any node that stays under its limits.
		// Otherwise to cool nodes only, so that relieving one node does not
		// warm another towards hot.
		// Wherever it goes, a destination must stay under the high
		// thresholds with the pod: the source's limit, lowered to the mean
		// plus the deviation, is the source's, not the destination's. A move
		// for balance alone must also leave the destination within the
		// deviation, or the next cycle would balance the destination.
		rules := destinationRules{undoes: undoes, low: p.args.LowThresholds, high: p.args.HighThresholds, narrows: narrows}
		if balancing {
			rules.source = job.limit
		}
		candidates := job.to.cool
		if !balancing && len(p.Deps.Model.SchedulerThresholds().Above(c.loads[node.Name])) > 0 {
			candidates, rules.low = job.to.relief, nil
		}
		dest, why := pickDestination(ctx, pod, amounts[pod], node.Name, candidates, rules, c.loads, c.unsampled, p.Deps.Model, p.Fit())
		if dest == nil {
			p.skip(podLogger, balance.SkipNoDestination, "no node can take the pod", "rejected", why)
			continue
		}
		if !p.Handle.Evictor().PreEvictionFilter(pod) {
			p.skip(podLogger, balance.SkipFiltered, "pre-eviction filter refused the pod")
			continue
		}
		reason := eventReason(over, c.loads[node.Name], job.limit, node.Name, dest.Node.Name)
		sourceLoad := shares[pod]
		destinationLoad := p.Deps.Model.Share(amounts[pod], dest.Node)
		because := overLimits(over, c.loads[node.Name], job.limit, p.args.HighThresholds)
		if job.pull {
			because = pulledBy(over, c.loads[node.Name], c.loads[dest.Node.Name], c.mean, p.args.DeviationThresholds, dest.Node.Name)
		}
		note := moveNote(because, over, c.loads[node.Name], node.Name, dest.Node.Name,
			c.loads[node.Name].Add(sourceLoad, -1), c.loads[dest.Node.Name].Add(destinationLoad, 1))
		surge, only := p.surgeTarget(ctx, podLogger, pod)
		if only && surge == nil {
			p.skip(podLogger, balance.SkipFiltered, "its workload's only pod, which a rollout cannot move with a Ready pod throughout; evicting it would leave the workload down")
			continue
		}
		if surge != nil {
			note += fmt.Sprintf("; by a rollout of Deployment %s, its replacement Ready before the pod stops", surge.Name)
		}
		if p.args.DryRun && surge != nil {
			podLogger.Info("Would move pod by a rollout of its Deployment (dry run)", "deployment", klog.KObj(surge), "destination", dest.Node.Name,
				"score", dest.Score, "why", note)
		} else if p.args.DryRun {
			podLogger.Info("Would evict pod (dry run)", "reason", reason, "destination", dest.Node.Name, "score", dest.Score, "why", note)
		} else if surge != nil {
			if err := balance.Surge(ctx, p.Handle.ClientSet(), surge, c.now); err != nil {
				p.skip(podLogger, balance.SkipEvictionError, "rollout failed; trying the next pod", "err", err.Error())
				continue
			}
			podLogger.Info("Moved pod by a rollout of its Deployment", "deployment", klog.KObj(surge), "destination", dest.Node.Name,
				"score", dest.Score, "why", note)
			p.Deps.Metrics.SurgeMoves.WithLabelValues(PluginName, node.Name).Inc()
			if p.Deps.Events != nil {
				p.Deps.Events.Eventf(pod, nil, v1.EventTypeNormal, balance.ReasonMoved, "Descheduled", "%s", note)
			}
		} else if err := p.Handle.Evictor().Evict(ctx, pod, evictions.EvictOptions{StrategyName: PluginName, Reason: reason}); err != nil {
			if stop := p.evictionFailed(podLogger, c, err); stop {
				return
			}
			continue
		} else {
			podLogger.Info("Evicted pod", "reason", reason, "destination", dest.Node.Name, "score", dest.Score, "why", note)
			p.Deps.Metrics.Evictions.WithLabelValues(PluginName, evictionReason(over, c.loads[node.Name], p.args.HighThresholds), node.Name).Inc()
			if p.Deps.Events != nil {
				p.Deps.Events.Eventf(pod, nil, v1.EventTypeNormal, balance.ReasonMoved, "Descheduled", "%s", note)
			}
		}
		sourceUsage, destinationUsage := c.loads[node.Name], c.loads[dest.Node.Name]
		c.loads[node.Name] = c.loads[node.Name].Add(sourceLoad, -1)
		c.loads[dest.Node.Name] = c.loads[dest.Node.Name].Add(destinationLoad, 1)
		c.byNode[node.Name]++
		c.evicted++
		c.byNamespace[pod.Namespace]++
		if !p.args.DryRun {
			switch {
			case job.pull:
				s.RememberPull(wl, pod.UID, node.Name, dest.Node.Name, c.now, sourceLoad, destinationLoad)
			case balancing:
				s.Remember(wl, pod.UID, node.Name, dest.Node.Name, c.now, sourceLoad, destinationLoad)
			default:
				s.RememberCooling(wl, pod.UID, node.Name, dest.Node.Name, c.now, sourceLoad, destinationLoad)
			}
			s.Note(pod.UID, note, sourceUsage, destinationUsage)
		}
	}
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

// replicaCount returns how many pods w, the workload of pod, ran when the
// cycle first counted them, pod included, or 1 when they cannot be counted:
// the fewest moves balancing may make. The count is the cycle's first: the
// pods it evicts leave the informer before their replacements arrive, and
// a workload's budget must not shrink with each of its moves.
func (p *LoadAwareBalance) replicaCount(logger klog.Logger, c *cycle, w balance.Workload, pod *v1.Pod) int {
	if n, ok := c.replicas[w]; ok {
		return n
	}
	n, ok := p.countReplicas(logger, pod)
	if !ok {
		n = 1
	}
	c.replicas[w] = n
	return n
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

// moveNote says why a pod moves off source (why: overLimits or pulledBy)
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

// overLimits says, for each resource in over, which limits load crossed:
// its high threshold, and the cluster's mean plus its deviation when that
// is lower (the node is brought under both) or the node is only above the
// mean.
func overLimits(over []usage.Resource, load balance.NodeLoad, limit, high balance.ResourceThresholds) []string {
	parts := make([]string, len(over))
	for i, r := range over {
		h, ok := high[r]
		switch {
		case !ok || load[r] <= h:
			parts[i] = overDeviation(r, load[r], limit[r])
		case limit[r] < h:
			parts[i] = fmt.Sprintf("%s %.1f%% over its high threshold %.1f%% and the cluster's mean plus its deviation %.1f%%", r, load[r], h, limit[r])
		default:
			parts[i] = fmt.Sprintf("%s %.1f%% over its high threshold %.1f%%", r, load[r], h)
		}
	}
	return parts
}

// pulledBy says, for each resource in over, that the source is above the
// cluster's mean while dest is more than the deviation below it.
func pulledBy(over []usage.Resource, load, destLoad, mean balance.NodeLoad, deviation balance.ResourceThresholds, dest string) []string {
	parts := make([]string, len(over))
	for i, r := range over {
		parts[i] = fmt.Sprintf("%s %.1f%% over the cluster's mean %.1f%%", r, load[r], mean[r])
		if d, ok := deviation[r]; ok && destLoad[r] < mean[r]-d {
			parts[i] += fmt.Sprintf(" while %s at %.1f%% is under the mean minus its deviation %.1f%%", dest, destLoad[r], mean[r]-d)
		}
	}
	return parts
}

// overDeviation says that resource r, at v percent, is over the cluster's
// mean plus its deviation, limit.
func overDeviation(r usage.Resource, v, limit float64) string {
	return fmt.Sprintf("%s %.1f%% over the cluster's mean plus its deviation %.1f%%", r, v, limit)
}

// evictionReason is the reason label of an eviction: hot-<resources> when a
// resource is above its high threshold, above-mean-<resources> when the
// node is only above the cluster mean plus its deviation.
func evictionReason(over []usage.Resource, load balance.NodeLoad, high balance.ResourceThresholds) string {
	if len(high.Above(load)) > 0 {
		return "hot-" + joinResources(over)
	}
	return "above-mean-" + joinResources(over)
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
