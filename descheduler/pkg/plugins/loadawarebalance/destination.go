package loadawarebalance

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"

	"github.com/ballast-sched/ballast/load-watcher/pkg/loadscore"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// destination is where a moved pod is expected to land.
type destination struct {
	node  *v1.Node
	score int64
}

// pickDestination returns the best cool node for pod: it must not be a node
// the workload was moved off within the cooldown (undoes), be cool now
// (moves earlier in this cycle included), stay under its limits (the high
// thresholds, lowered to the mean plus the deviation when set) with the pod
// on it, judged and scored by the scheduler's load model, and
// accept the pod the way the scheduler would (unschedulable, node selector
// and affinity, taints, inter-pod anti-affinity, requests). The load model is
// cheap and the fit check lists pods, so nodes are fit-checked best score
// first and the first that fits wins. When none qualifies it returns nil and
// why each cool node was rejected.
//
// narrows, when not nil, must also accept the node: a move for balance alone
// must leave the two nodes closer together than it found them.
func pickDestination(ctx context.Context, pod *v1.Pod, amount loadscore.Amount, source string, cool []*v1.Node, undoes func(node string) bool,
	narrows func(dest *v1.Node) bool, loads map[string]balance.NodeLoad, limits map[string]balance.ResourceThresholds, low balance.ResourceThresholds, model balance.LoadModel,
	podsOn podutil.GetPodsAssignedToNodeFunc) (*destination, string) {
	var ranked []destination
	var rejected []string
	for _, n := range cool {
		if n.Name == source {
			continue
		}
		if undoes(n.Name) {
			rejected = append(rejected, n.Name+": the workload was moved off it within the cooldown")
			continue
		}
		if !low.AllBelow(loads[n.Name]) {
			rejected = append(rejected, n.Name+": no longer cool")
			continue
		}
		p := model.Place(amount, n, loads[n.Name], limits[n.Name])
		if !p.Fits {
			rejected = append(rejected, fmt.Sprintf("%s: %s", n.Name, p.Reason))
			continue
		}
		if narrows != nil && !narrows(n) {
			rejected = append(rejected, n.Name+": the move would leave it and the source further apart, or it holds as many of the workload's replicas")
			continue
		}
		ranked = append(ranked, destination{node: n, score: p.Score})
	}
	slices.SortStableFunc(ranked, func(a, b destination) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.node.Name, b.node.Name))
	})
	for _, d := range ranked {
		if err := nodeutil.NodeFit(ctx, podsOn, pod, d.node); err != nil {
			rejected = append(rejected, fmt.Sprintf("%s: %v", d.node.Name, err))
			continue
		}
		return &d, ""
	}
	if len(rejected) == 0 {
		return nil, "no cool node with fresh usage"
	}
	return nil, strings.Join(rejected, "; ")
}
