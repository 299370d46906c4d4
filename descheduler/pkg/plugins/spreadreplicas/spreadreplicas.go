package spreadreplicas

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/pluginargs"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/evictions"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// PluginName is the name of the plugin in a descheduler policy.
const PluginName = "SpreadReplicas"

// minDifference is how many fewer replicas a destination must hold than the
// source. With a difference of one, moving a replica only swaps the counts,
// and the next cycle would move it back.
const minDifference = 2

const maxEventReason = 128

var _ frameworktypes.BalancePlugin = &SpreadReplicas{}

// SpreadReplicas evicts a surplus replica of a workload from a node when
// another node holds at least two fewer and can take it by real usage.
type SpreadReplicas struct {
	balance.Plugin
	args *SpreadReplicasArgs
}

// New builds the plugin from its args.
func New(ctx context.Context, obj runtime.Object, handle frameworktypes.Handle, deps balance.Deps) (*SpreadReplicas, error) {
	args, err := pluginargs.Decode(PluginName, obj, func(a *SpreadReplicasArgs) { SetDefaults_SpreadReplicasArgs(a) }, func(_ *field.Path, a *SpreadReplicasArgs) error { return ValidateSpreadReplicasArgs(a) })
	if err != nil {
		return nil, err
	}
	base, err := balance.NewPlugin(ctx, PluginName, handle, deps, &args.EvictionArgs)
	if err != nil {
		return nil, err
	}
	return &SpreadReplicas{Plugin: base, args: args}, nil
}

// Name returns the plugin name.
func (p *SpreadReplicas) Name() string { return PluginName }

// cycle is the state of one Balance call.
type cycle struct {
	now time.Time
	// loads are the nodes' usage corrected for moves not yet measured;
	// reported is what load-watcher reports, as the scheduler sees it.
	loads, reported map[string]balance.NodeLoad
	// peaks are the window maxima, corrected like loads.
	peaks map[string]balance.NodeLoad
	// sampled is when each node's window was sampled; unsampled, filled
	// as nodes are judged, is what the pods that started on a node since
	// add (see unsampledOn).
	sampled     map[string]time.Time
	window      time.Duration
	unsampled   map[string]balance.NodeLoad
	evicted     int32
	fromNode    map[string]int32
	byNamespace map[string]int32
	stopped     bool
}

// replicas is one workload's pods across the nodes of a cycle.
type replicas struct {
	// count holds every running replica per node, evictable or not.
	count map[string]int
	// evictable holds the candidates per node, the first evicted first.
	evictable map[string][]*v1.Pod
	// ordered are the nodes whose candidates are in eviction order
	// (byUsage).
	ordered map[string]bool
}

// total is how many replicas run, on every node.
func (r *replicas) total() int {
	n := 0
	for _, k := range r.count {
		n += k
	}
	return n
}

// Balance runs one descheduling cycle.
func (p *SpreadReplicas) Balance(ctx context.Context, nodes []*v1.Node) *frameworktypes.Status {
	nodes = balance.ByName(nodes)
	logger := p.Logger.WithValues("ExtensionPoint", frameworktypes.BalanceExtensionPoint)
	s := p.Deps.Store
	s.Lock()
	defer s.Unlock()
	// The moves kept in the cluster: a new leader's first cycle undoes
	// nothing its predecessor did.
	p.Deps.Recall(ctx, logger)
	defer p.Deps.Keep(ctx, logger)

	c := &cycle{now: p.Deps.Clock.Now(), loads: map[string]balance.NodeLoad{}, reported: map[string]balance.NodeLoad{}, peaks: map[string]balance.NodeLoad{},
		sampled: map[string]time.Time{}, window: p.args.Window.Duration, unsampled: map[string]balance.NodeLoad{}, fromNode: map[string]int32{}, byNamespace: map[string]int32{}}
	s.Expire(c.now, max(p.args.BalanceCooldown.Duration, p.args.Window.Duration))
	p.Deps.FollowReplacements(ctx, logger, p.Handle, PluginName, nodes)

	snap := p.Deps.Usage.Snapshot()
	window := usage.Window(p.args.Window.Duration)
	for _, n := range nodes {
		load, ok := balance.ReadLoad(snap, n.Name, window, p.args.ThresholdStatistics, p.args.HighThresholds)
		if !ok {
			// Unknown usage never makes a node a destination.
			p.Deps.Metrics.SkippedCandidates.WithLabelValues(PluginName, balance.SkipReason(snap, n.Name)).Inc()
			logger.V(3).Info("Node has no fresh usage; not a destination", "node", klog.KObj(n), "reason", balance.SkipReason(snap, n.Name))
			continue
		}
		inFlight := s.InFlight(n.Name, snap.Nodes[n.Name].SampleTime, window.Duration(), p.args.ThresholdStatistics)
		c.reported[n.Name] = load
		c.loads[n.Name] = load.Add(inFlight, 1)
		c.sampled[n.Name] = snap.Nodes[n.Name].SampleTime
		if peak, ok := balance.ReadPeak(snap, n.Name, window, p.args.HighThresholds); ok {
			c.peaks[n.Name] = peak.Add(inFlight, 1)
		}
	}
	if len(c.loads) == 0 {
		logger.Info("Usage is stale or missing for every node; evicting nothing this cycle", "nodes", len(nodes))
		return nil
	}
	workloads, err := p.replicasByWorkload(logger, nodes)
	if err != nil {
		logger.Error(err, "Listing pods")
		return &frameworktypes.Status{Err: err}
	}
	keys := make([]balance.Workload, 0, len(workloads))
	for w := range workloads {
		keys = append(keys, w)
	}
	slices.SortFunc(keys, func(a, b balance.Workload) int { return strings.Compare(a.String(), b.String()) })
	for _, w := range keys {
		if c.stopped {
			break
		}
		p.spread(ctx, logger.WithValues("workload", w), c, w, workloads[w], nodes)
	}
	return nil
}

// replicasByWorkload counts the running replicas of every controlled pod on
// nodes and collects those this plugin may evict.
func (p *SpreadReplicas) replicasByWorkload(logger klog.Logger, nodes []*v1.Node) (map[balance.Workload]*replicas, error) {
	out := map[balance.Workload]*replicas{}
	get := func(w balance.Workload) *replicas {
		if out[w] == nil {
			out[w] = &replicas{count: map[string]int{}, evictable: map[string][]*v1.Pod{}, ordered: map[string]bool{}}
		}
		return out[w]
	}
	for _, n := range nodes {
		all, err := p.PodsOn(n.Name, func(pod *v1.Pod) bool {
			return pod.Status.Phase != v1.PodSucceeded && pod.Status.Phase != v1.PodFailed
		})
		if err != nil {
			return nil, fmt.Errorf("listing pods on node %s: %w", n.Name, err)
		}
		for _, pod := range all {
			if w, ok := balance.WorkloadOf(pod); ok {
				get(w).count[n.Name]++
			}
		}
		evictable, err := p.PodsOn(n.Name, p.PodFilter)
		if err != nil {
			return nil, fmt.Errorf("listing evictable pods on node %s: %w", n.Name, err)
		}
		// A pod whose memory keeps growing stays: it would heat any node.
		evictable = p.WithoutGrowing(logger, PluginName, evictable)
		// So does one its volumes keep on its node.
		evictable = p.WithoutPinned(logger, PluginName, evictable, nodes)
		podutil.SortPodsBasedOnPriorityLowToHigh(evictable)
		for _, pod := range evictable {
			if w, ok := balance.WorkloadOf(pod); ok {
				get(w).evictable[n.Name] = append(get(w).evictable[n.Name], pod)
			}
		}
	}
	return out, nil
}

// spread moves replicas of w, one at a time from the node holding the most,
// until no node holds minDifference more than a node that can take one.
func (p *SpreadReplicas) spread(ctx context.Context, logger klog.Logger, c *cycle, w balance.Workload, r *replicas, nodes []*v1.Node) {
	for !c.stopped && p.moveOne(ctx, logger, c, w, r, nodes) {
	}
}

// moveOne evicts one replica of w and reports whether it did.
func (p *SpreadReplicas) moveOne(ctx context.Context, logger klog.Logger, c *cycle, w balance.Workload, r *replicas, nodes []*v1.Node) bool {
	s := p.Deps.Store
	sources := slices.Clone(nodes)
	// The most replicas first; names break ties (the nodes come in the
	// informer's order, which is random).
	slices.SortStableFunc(sources, func(a, b *v1.Node) int {
		return cmp.Or(cmp.Compare(r.count[b.Name], r.count[a.Name]), strings.Compare(a.Name, b.Name))
	})
	for _, src := range sources {
		if r.count[src.Name] < minDifference {
			return false
		}
		if !r.ordered[src.Name] {
			p.byUsage(ctx, r.evictable[src.Name], src)
			r.ordered[src.Name] = true
		}
		for len(r.evictable[src.Name]) > 0 {
			if c.evicted >= *p.args.MaxEvictionsPerCycle {
				logger.V(2).Info("Eviction limit per cycle reached", "limit", *p.args.MaxEvictionsPerCycle)
				c.stopped = true
				return false
			}
			if c.fromNode[src.Name] >= *p.args.MaxEvictionsPerNode {
				break
			}
			// Spreading is balancing: it never undoes a move within
			// balanceCooldown, and moves a workload balance.BalanceMoves
			// times per cooldown at most (every move restarts a pod).
			if s.Bounced(w, src.Name, c.now, p.args.EvictionCooldown.Duration) || s.MovedOnto(w, src.Name, time.Time{}, c.now, p.args.BalanceCooldown.Duration) ||
				s.OutOfBalanceMoves(w, r.total(), src.Name, c.now, p.args.BalanceCooldown.Duration) {
				p.skip(logger, balance.SkipCooldown, "the workload was moved onto this node, or off other nodes as often as balancing moves it, or a replacement landed back on it, within the cooldown",
					"node", klog.KObj(src))
				break
			}
			pod := r.evictable[src.Name][0]
			podLogger := logger.WithValues("pod", klog.KObj(pod), "node", klog.KObj(src))
			if !p.PlacedByBallast(pod) {
				r.evictable[src.Name] = r.evictable[src.Name][1:]
				p.skip(podLogger, balance.SkipOtherScheduler, "pod is placed by another scheduler, which would not place its replacement by real usage",
					"schedulerName", pod.Spec.SchedulerName)
				continue
			}
			if c.byNamespace[pod.Namespace] >= *p.args.MaxEvictionsPerNamespace {
				p.skip(podLogger, balance.SkipLimit, "namespace eviction limit reached")
				return false
			}
			amount := p.Deps.PodAmount(ctx, PluginName, pod)
			dest, why := p.pickDestination(ctx, c, w, r, pod, amount, src, nodes)
			if dest == nil {
				p.skip(podLogger, balance.SkipNoDestination, "no node with fewer replicas can take the pod", "rejected", why)
				break
			}
			r.evictable[src.Name] = r.evictable[src.Name][1:]
			if !p.Handle.Evictor().PreEvictionFilter(pod) {
				p.skip(podLogger, balance.SkipFiltered, "pre-eviction filter refused the pod")
				continue
			}
			if !p.evict(ctx, podLogger, c, w, r, pod, amount, src, dest) {
				continue
			}
			return true
		}
	}
	return false
}

// byUsage orders a node's candidates of one workload for eviction: the
// replica using most of the node first, which relieves it most (replicas
// of one template share their priority and QoS class, which order the
// descheduler's candidates). Replicas using alike are alike for the move;
// their names, which are random, order them last. The usage is read here,
// once a node has replicas to move, not for every replica of every
// workload at every cycle.
func (p *SpreadReplicas) byUsage(ctx context.Context, pods []*v1.Pod, node *v1.Node) {
	share := make(map[*v1.Pod]float64, len(pods))
	for _, pod := range pods {
		for _, v := range p.Deps.Model.Share(p.Deps.PodAmount(ctx, PluginName, pod), node) {
			share[pod] += v
		}
	}
	slices.SortStableFunc(pods, func(a, b *v1.Pod) int {
		return cmp.Or(cmp.Compare(share[b], share[a]), strings.Compare(a.Name, b.Name))
	})
}

// evict evicts pod from src towards dest and accounts for the move; it
// reports whether the pod was (or, in a dry run, would be) evicted.
func (p *SpreadReplicas) evict(ctx context.Context, logger klog.Logger, c *cycle, w balance.Workload, r *replicas, pod *v1.Pod, amount loadmodel.Amount, src, dest *v1.Node) bool {
	reason := eventReason(w, r, src.Name, dest.Name)
	note := moveNote(w, r, src.Name, dest.Name)
	sourceUsage, destinationUsage := c.loads[src.Name], c.loads[dest.Name]
	existed := balance.WorkloadPods(ctx, p.Handle, pod, w)
	if p.args.DryRun {
		logger.Info("Would evict pod (dry run)", "reason", reason, "destination", dest.Name, "why", note)
	} else if err := p.Handle.Evictor().Evict(ctx, pod, evictions.EvictOptions{StrategyName: PluginName, Reason: reason}); err != nil {
		p.skip(logger, balance.SkipEvictionError, "eviction refused; trying the next pod", "err", err.Error())
		return false
	} else {
		logger.Info("Evicted pod", "reason", reason, "destination", dest.Name, "why", note)
		p.Deps.Metrics.Evictions.WithLabelValues(PluginName, "spread", src.Name).Inc()
		if p.Deps.Events != nil {
			p.Deps.Events.Eventf(pod, nil, v1.EventTypeNormal, balance.ReasonMoved, "Descheduled", "%s", note)
		}
	}
	srcLoad, destLoad := p.Deps.Model.Share(amount, src), p.Deps.Model.Share(amount, dest)
	if l, ok := c.loads[src.Name]; ok {
		c.loads[src.Name] = l.Add(srcLoad, -1)
	}
	c.loads[dest.Name] = c.loads[dest.Name].Add(destLoad, 1)
	if l, ok := c.peaks[src.Name]; ok {
		c.peaks[src.Name] = l.Add(srcLoad, -1)
	}
	if l, ok := c.peaks[dest.Name]; ok {
		c.peaks[dest.Name] = l.Add(destLoad, 1)
	}
	r.count[src.Name]--
	r.count[dest.Name]++
	c.evicted++
	c.fromNode[src.Name]++
	c.byNamespace[pod.Namespace]++
	if !p.args.DryRun {
		p.Deps.Store.Remember(w, pod.UID, src.Name, dest.Name, c.now, srcLoad, destLoad)
		p.Deps.Store.Existed(pod.UID, existed)
		p.Deps.Store.Note(pod.UID, note, sourceUsage, destinationUsage)
	}
	return true
}

// moveNote says why a pod moves: its workload's replicas on the two nodes,
// and what the move is expected to make of them, e.g. "Moved off node-a by
// SpreadReplicas: default/Deployment/web has 6 replicas on node-a, 0 on
// node-b; expected destination node-b; expected after the move: 5 on
// node-a, 1 on node-b".
func moveNote(w balance.Workload, r *replicas, source, dest string) string {
	return fmt.Sprintf("Moved off %s by SpreadReplicas: %s has %d replicas on %s, %d on %s; expected destination %s; expected after the move: %d on %s, %d on %s",
		source, w, r.count[source], source, r.count[dest], dest, dest, r.count[source]-1, source, r.count[dest]+1, dest)
}

func (p *SpreadReplicas) skip(logger klog.Logger, reason, msg string, kv ...any) {
	p.Deps.Metrics.SkippedCandidates.WithLabelValues(PluginName, reason).Inc()
	logger.V(2).Info("Skipping eviction candidate: "+msg, append([]any{"skipReason", reason}, kv...)...)
}

// eventReason says why the pod is evicted and where it should go, e.g.
// "default/Deployment/web has 6 replicas on node-a, 0 on node-b; expected
// destination node-b".
func eventReason(w balance.Workload, r *replicas, source, dest string) string {
	s := fmt.Sprintf("%s has %d replicas on %s, %d on %s; expected destination %s",
		w, r.count[source], source, r.count[dest], dest, dest)
	if len(s) > maxEventReason {
		s = s[:maxEventReason]
	}
	return s
}
