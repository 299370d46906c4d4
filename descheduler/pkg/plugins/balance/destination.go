package balance

import (
	"cmp"
	"context"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

// Destination is where a moved pod is expected to land: a node a plugin's
// checks accepted, with the load model's score for the pod on it.
type Destination struct {
	Node  *v1.Node
	Score int64
	// rank orders destinations, lowest first; ties go to the node name.
	rank []int64
}

// Judge is a plugin's verdict on one node for the pod it wants to move: the
// load model's score for the pod there and the keys the node ranks by
// (compared in order, lowest first), or why the node cannot take the pod.
type Judge func(n *v1.Node) (score int64, rank []int64, why string)

// Fit says, for each of nodes, why the scheduler would not place pod there by
// its filters; nil where it would. One call judges all the nodes for the pod
// on one view of the cluster.
type Fit func(ctx context.Context, pod *v1.Pod, nodes []*v1.Node) []error

// NodeFit is the upstream descheduler's fit check (unschedulable, node
// selector and affinity, taints, inter-pod anti-affinity, requests), over the
// pods podsOn lists: what a plugin judges with when its Deps give no Fit.
func NodeFit(podsOn podutil.GetPodsAssignedToNodeFunc) Fit {
	return func(ctx context.Context, pod *v1.Pod, nodes []*v1.Node) []error {
		out := make([]error, len(nodes))
		for i, n := range nodes {
			out[i] = nodeutil.NodeFit(ctx, podsOn, pod, n)
		}
		return out
	}
}

// PickDestination is how every balance plugin chooses where a pod goes: it
// judges each node but the source, ranks those judge accepts, and returns
// the first of them that accepts the pod the way the scheduler would (fit).
// The load model is cheap and the fit check is not, so only the nodes it
// accepts are fit-checked, in one call, and the first of them in rank order
// that fits wins. When none does it
// returns nil and why each node was turned down, or noneWhy when there was
// no node to judge.
func PickDestination(ctx context.Context, pod *v1.Pod, source string, nodes []*v1.Node, fit Fit,
	judge Judge, noneWhy string) (*Destination, string) {
	var ranked []Destination
	var rejected []string
	for _, n := range nodes {
		if n.Name == source {
			continue
		}
		score, rank, why := judge(n)
		if why != "" {
			rejected = append(rejected, n.Name+": "+why)
			continue
		}
		ranked = append(ranked, Destination{Node: n, Score: score, rank: rank})
	}
	slices.SortStableFunc(ranked, func(a, b Destination) int {
		return cmp.Or(slices.Compare(a.rank, b.rank), cmp.Compare(a.Node.Name, b.Node.Name))
	})
	candidates := make([]*v1.Node, len(ranked))
	for i, d := range ranked {
		candidates[i] = d.Node
	}
	for i, err := range fit(ctx, pod, candidates) {
		if err != nil {
			rejected = append(rejected, ranked[i].Node.Name+": "+err.Error())
			continue
		}
		return &ranked[i], ""
	}
	if len(rejected) == 0 {
		return nil, noneWhy
	}
	return nil, strings.Join(rejected, "; ")
}
