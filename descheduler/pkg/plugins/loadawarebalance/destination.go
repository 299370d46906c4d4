package loadawarebalance

import (
	"context"
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

// destination is where a moved pod is expected to land.
type destination struct {
	node  *v1.Node
	score int64
}

// pickDestination returns the best cool node for pod: it must be cool now
// (moves earlier in this cycle included), accept the pod the way the
// scheduler would (unschedulable, node selector and affinity, taints,
// inter-pod anti-affinity, requests), and stay under every high threshold
// with the pod on it, judged and scored by the scheduler's load model. When
// none qualifies it returns nil and why each cool node was rejected.
func pickDestination(ctx context.Context, pod *v1.Pod, source string, cool []*v1.Node, loads map[string]NodeLoad,
	args *LoadAwareBalanceArgs, model LoadModel, podsOn podutil.GetPodsAssignedToNodeFunc) (*destination, string) {
	var best *destination
	var rejected []string
	for _, n := range cool {
		if n.Name == source {
			continue
		}
		if !args.LowThresholds.allBelow(loads[n.Name]) {
			rejected = append(rejected, n.Name+": no longer cool")
			continue
		}
		if err := nodeutil.NodeFit(ctx, podsOn, pod, n); err != nil {
			rejected = append(rejected, fmt.Sprintf("%s: %v", n.Name, err))
			continue
		}
		p := model.Place(pod, n, loads[n.Name], args.HighThresholds)
		if !p.Fits {
			rejected = append(rejected, fmt.Sprintf("%s: %s", n.Name, p.Reason))
			continue
		}
		if best == nil || p.Score > best.score {
			best = &destination{node: n, score: p.Score}
		}
	}
	if best == nil && len(rejected) == 0 {
		return nil, "no cool node with fresh usage"
	}
	return best, strings.Join(rejected, "; ")
}
