package balance

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// NodeLoad is usage per resource in percent of a node's allocatable.
type NodeLoad map[usage.Resource]float64

// Add returns l + factor × o for the resources of l.
func (l NodeLoad) Add(o NodeLoad, factor float64) NodeLoad {
	out := make(NodeLoad, len(l))
	for r, v := range l {
		out[r] = v + factor*o[r]
	}
	return out
}

// SnapshotSource is where the plugin reads real usage: load-watcher's HTTP
// client or its in-process collector. Stale flags are already evaluated.
type SnapshotSource interface {
	Snapshot() *usage.Snapshot
}

// Placement is the verdict of the load model on one destination.
type Placement struct {
	// Fits is false when the pod would push the node above a high threshold.
	Fits bool
	// Score ranks fitting nodes; higher is better.
	Score int64
	// Reason explains a node that does not fit.
	Reason string
}

// LoadModel is the scheduler's load arithmetic as the plugin needs it, so the
// descheduler never predicts differently from the scheduler that places the
// replacement pod.
type LoadModel interface {
	// EstimatePod guesses what pod uses from its spec, as the scheduler
	// does for a pod it has not seen run.
	EstimatePod(pod *v1.Pod) loadmodel.Amount
	// Share is amount in percent of node's allocatable.
	Share(amount loadmodel.Amount, node *v1.Node) NodeLoad
	// Place judges node as a destination for a pod using amount, given the
	// node's current usage (moves still in flight included) and the high
	// thresholds.
	Place(amount loadmodel.Amount, node *v1.Node, current NodeLoad, high ResourceThresholds) Placement
	// SchedulerThresholds are where the scheduler stops placing pods on a
	// node.
	SchedulerThresholds() ResourceThresholds
}

// ReadLoad returns, for every resource in want, the statistic stats names
// for it (the one the scheduler's LoadAware compares with its thresholds), and
// false when the node is missing, stale or lacks samples for one of them.
func ReadLoad(snap *usage.Snapshot, node string, w usage.Window, stats loadmodel.Statistics, want ...ResourceThresholds) (NodeLoad, bool) {
	return readStat(snap, node, w, stats.Pick, want...)
}

// ReadPeak returns the window maximum of every resource in want, like
// ReadLoad: what a destination must stay under, so that a node whose load
// comes and goes is not taken for a cool one between two peaks.
func ReadPeak(snap *usage.Snapshot, node string, w usage.Window, want ...ResourceThresholds) (NodeLoad, bool) {
	return readStat(snap, node, w, func(_ usage.Resource, s usage.Stats) float64 { return s.Max }, want...)
}

// ReadLatest returns the newest sample of every resource in want, like
// ReadLoad: whether a node over its limit on the window's statistic still
// is now.
func ReadLatest(snap *usage.Snapshot, node string, w usage.Window, want ...ResourceThresholds) (NodeLoad, bool) {
	return readStat(snap, node, w, func(_ usage.Resource, s usage.Stats) float64 { return s.Latest }, want...)
}

// SkipReason is the reason label for a node ReadLoad found no usable usage
// for: "invalid" when the load-watcher client refused the node's data
// (usage.NodeUsage.Invalid), "stale" when it is old or missing.
func SkipReason(snap *usage.Snapshot, node string) string {
	if snap != nil && snap.Nodes[node].Invalid != "" {
		return SkipInvalid
	}
	return SkipStale
}

func readStat(snap *usage.Snapshot, node string, w usage.Window, stat func(usage.Resource, usage.Stats) float64, want ...ResourceThresholds) (NodeLoad, bool) {
	nu, ok := snap.Node(node)
	if !ok {
		return nil, false
	}
	load := NodeLoad{}
	for _, t := range want {
		for r := range t {
			s, ok := nu.Get(w, r)
			if !ok {
				return nil, false
			}
			load[r] = stat(r, s)
		}
	}
	return load, true
}

// Above returns the resources whose load is strictly above their threshold,
// in a stable order.
func (t ResourceThresholds) Above(l NodeLoad) []usage.Resource {
	var out []usage.Resource
	for r, limit := range t {
		if l[r] > limit {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// AllBelow reports whether every thresholded resource is strictly below its threshold.
func (t ResourceThresholds) AllBelow(l NodeLoad) bool {
	for r, limit := range t {
		if !(l[r] < limit) {
			return false
		}
	}
	return true
}

// ByName returns the nodes sorted by name. The descheduler hands a plugin
// the nodes in its informer's order, which is random; a plugin that walks
// them in name order makes the same moves from the same cluster, down to
// the last bit of a sum of their loads.
func ByName(nodes []*v1.Node) []*v1.Node {
	out := slices.Clone(nodes)
	slices.SortFunc(out, func(a, b *v1.Node) int { return strings.Compare(a.Name, b.Name) })
	return out
}
