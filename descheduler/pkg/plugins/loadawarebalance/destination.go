package loadawarebalance

import (
	"context"

	v1 "k8s.io/api/core/v1"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"

	"github.com/ballast-sched/ballast/core/loadmodel"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// pickDestination returns the best of candidates for pod: it must not be a
// node the workload was moved off within the cooldown (undoes), be under the
// low thresholds now when low is set (moves earlier in this cycle included),
// stay under its limits (the high thresholds, lowered to the mean plus the
// deviation when set) with the pod on it, judged and scored by the
// scheduler's load model on its load and, as the scheduler counts them, the
// pods that started on it since its window was sampled (unsampled), and accept the pod the way the scheduler would
// (balance.PickDestination). The best score wins. When none qualifies it
// returns nil and why each candidate was rejected.
//
// narrows, when not nil, must also accept the node: a move for balance alone
// must leave the two nodes closer together than it found them.
func pickDestination(ctx context.Context, pod *v1.Pod, amount loadmodel.Amount, source string, cool []*v1.Node, undoes func(node string) bool,
	narrows func(dest *v1.Node) bool, loads, unsampled map[string]balance.NodeLoad, limits map[string]balance.ResourceThresholds, low balance.ResourceThresholds, model balance.LoadModel,
	podsOn podutil.GetPodsAssignedToNodeFunc) (*balance.Destination, string) {
	judge := func(n *v1.Node) (int64, []int64, string) {
		if undoes(n.Name) {
			return 0, nil, "the workload was moved off it within the cooldown"
		}
		if low != nil && !low.AllBelow(loads[n.Name]) {
			return 0, nil, "no longer cool"
		}
		p := model.Place(amount, n, loads[n.Name].Add(unsampled[n.Name], 1), limits[n.Name])
		if !p.Fits {
			return 0, nil, p.Reason
		}
		if narrows != nil && !narrows(n) {
			return 0, nil, "the move would leave it and the source further apart, or it holds as many of the workload's replicas"
		}
		return p.Score, []int64{-p.Score}, ""
	}
	return balance.PickDestination(ctx, pod, source, cool, podsOn, judge, "no node with fresh usage that is not hot")
}
