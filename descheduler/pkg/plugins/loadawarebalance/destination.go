package loadawarebalance

import (
	"context"
	"math"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// destinationRules are what a destination is judged by, besides the
// scheduler's own view of it (balance.PickDestination).
type destinationRules struct {
	// undoes reports whether the workload was moved off node within the
	// cooldown: the move would undo it.
	undoes func(node string) bool
	// low, when set, is what a destination must be under now (moves
	// earlier in this cycle included): cool.
	low balance.ResourceThresholds
	// high is what a destination must stay under with the pod on it: the
	// high thresholds, where a destination would be a hot node itself;
	// balance.LoadModel.Place adds the scheduler's thresholds.
	high balance.ResourceThresholds
	// source, when set, is what a destination of a move for balance alone
	// must stay under with the pod on it: the cluster's mean plus the
	// deviation, over which the destination would be a source itself
	// next cycle. The source's own limit says nothing about a destination
	// of a move off a node over its high thresholds.
	source balance.ResourceThresholds
	// narrows, when set, must also accept the node: a move for balance
	// alone must leave the two nodes closer together than it found them.
	narrows func(dest *v1.Node) bool
}

// pickDestination returns the best of candidates for pod: it must pass
// rules, judged and scored by the scheduler's load model on its load and,
// as the scheduler counts them, the pods that started on it since its
// window was sampled (unsampled), and accept the pod the way the scheduler
// would (balance.PickDestination). The best score wins. When none qualifies
// it returns nil and why each candidate was rejected.
func pickDestination(ctx context.Context, pod *v1.Pod, amount loadmodel.Amount, source string, candidates []*v1.Node, rules destinationRules,
	loads, unsampled map[string]balance.NodeLoad, model balance.LoadModel, fit balance.Fit) (*balance.Destination, string) {
	judge := func(n *v1.Node) (int64, []int64, string) {
		if rules.undoes(n.Name) {
			return 0, nil, "the workload was moved off it within the cooldown"
		}
		if rules.low != nil && !rules.low.AllBelow(loads[n.Name]) {
			return 0, nil, "no longer cool"
		}
		load := loads[n.Name].Add(unsampled[n.Name], 1)
		p := model.Place(amount, n, load, rules.high)
		if !p.Fits {
			return 0, nil, p.Reason
		}
		if rules.source != nil {
			if why := overWithPod(rules.source, load.Add(model.Share(amount, n), 1)); why != "" {
				return 0, nil, why + ": it would be a node to balance itself next cycle"
			}
		}
		if rules.narrows != nil && !rules.narrows(n) {
			return 0, nil, "the move would leave it and the source further apart, or with the pod it would hold more of the workload's replicas than the source and than its size's share"
		}
		return p.Score, []int64{-p.Score}, ""
	}
	return balance.PickDestination(ctx, pod, source, candidates, fit, judge, "no node with fresh usage that is not hot")
}

// overWithPod says which resources of after, a destination's usage with the
// pod on it, are over limit (the cluster's mean plus the deviation), or ""
// when none is.
func overWithPod(limit balance.ResourceThresholds, after balance.NodeLoad) string {
	over := limit.Above(after)
	if len(over) == 0 {
		return ""
	}
	parts := make([]string, len(over))
	for i, r := range over {
		parts[i] = overDeviation(r, after[r], limit[r])
	}
	return "with the pod " + strings.Join(parts, ", ")
}

// takesReplica reports whether a balance move may add one of a workload's
// replicas to a destination holding onDest of them, off a source holding
// onSource: when the destination holds fewer than the source, as
// kube-scheduler's replica spreading counts them, or when with the pod it
// holds no more than its share of the cluster's size (share, sizeShares)
// of the workload's replicas, rounded up. Without the second, a move off a
// small node could never go to a big one, which holds more of every
// workload; without the first, a node failing would take more of a
// workload with it than its size says.
func takesReplica(onDest, onSource, replicas int, share float64) bool {
	return onDest < onSource || float64(onDest+1) <= math.Ceil(float64(replicas)*share)
}

// sizeShares returns each node's share of the nodes' allocatable CPU and
// memory, the mean of the two shares.
func sizeShares(nodes []*v1.Node) map[string]float64 {
	resources := []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory}
	totals := make([]float64, len(resources))
	for _, n := range nodes {
		for i, r := range resources {
			q := n.Status.Allocatable[r]
			totals[i] += q.AsApproximateFloat64()
		}
	}
	out := make(map[string]float64, len(nodes))
	for _, n := range nodes {
		var sum float64
		var k int
		for i, r := range resources {
			if totals[i] > 0 {
				q := n.Status.Allocatable[r]
				sum += q.AsApproximateFloat64() / totals[i]
				k++
			}
		}
		if k > 0 {
			out[n.Name] = sum / float64(k)
		}
	}
	return out
}
