package loadawarebalance

import (
	"context"

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
		return p.Score, []int64{-p.Score}, ""
	}
	return balance.PickDestination(ctx, pod, source, candidates, fit, judge, "no node with fresh usage that is not hot")
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
