package spreadreplicas

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	nodeutil "sigs.k8s.io/descheduler/pkg/descheduler/node"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/load-watcher/pkg/loadscore"
)

// candidate is a node that may receive the replica.
type candidate struct {
	node  *v1.Node
	count int
	score int64
}

// pickDestination returns the node the evicted replica is expected on, or
// nil and why each node was rejected. A destination holds at least
// minDifference fewer replicas of w than the source, has fresh usage, is
// under every high threshold, on average and at its window peak, and stays
// under them with the pod, judged and
// scored by the scheduler's load model, was not the source of a recent move
// of w (that would undo it) and accepts the pod the way the scheduler would
// (NodeFit: unschedulable, selector and affinity, taints, requests). It must
// also score at least as well as the source on the usage load-watcher
// reports, which is what the scheduler places the replacement on: otherwise
// the scheduler would put it back on the source and the move would only
// churn. And it must not end more loaded than the source (evensOut), on
// average nor at the window peaks, so replicas follow node sizes instead of
// pulling against LoadAwareBalance, and do not move onto a node whose load
// comes and goes (a backup job) from one whose load does not.
// The fewest replicas win, then the best score.
func (p *SpreadReplicas) pickDestination(ctx context.Context, c *cycle, w balance.Workload, r *replicas, pod *v1.Pod, amount loadscore.Amount, src *v1.Node, nodes []*v1.Node) (*v1.Node, string) {
	source := src.Name
	var ranked []candidate
	var rejected []string
	reject := func(n *v1.Node, why string) { rejected = append(rejected, n.Name+": "+why) }
	sourceScore, sourceKnown := p.reportedScore(c, pod, src)
	for _, n := range nodes {
		if n.Name == source {
			continue
		}
		if r.count[n.Name] > r.count[source]-minDifference {
			reject(n, fmt.Sprintf("holds %d replicas, source %d", r.count[n.Name], r.count[source]))
			continue
		}
		load, ok := c.loads[n.Name]
		if !ok {
			reject(n, "no fresh usage")
			continue
		}
		if over := p.args.HighThresholds.Above(load); len(over) > 0 {
			reject(n, fmt.Sprintf("hot (%v)", over))
			continue
		}
		if over := p.args.HighThresholds.Above(c.peaks[n.Name]); len(over) > 0 {
			reject(n, fmt.Sprintf("hot at its peak in the window (%v)", over))
			continue
		}
		if p.Deps.Store.MovedOff(w, n.Name, c.now, p.args.BalanceCooldown.Duration) {
			reject(n, "the workload was moved off it within the cooldown")
			continue
		}
		pl := p.Deps.Model.Place(amount, n, load, p.args.HighThresholds)
		if !pl.Fits {
			reject(n, pl.Reason)
			continue
		}
		if srcLoad, ok := c.loads[source]; ok && !p.evensOut(amount, src, srcLoad, n, load) {
			reject(n, "it would end more loaded than the source")
			continue
		}
		if srcPeak, ok := c.peaks[source]; ok && !p.evensOut(amount, src, srcPeak, n, c.peaks[n.Name]) {
			reject(n, "at its peak in the window it would end more loaded than the source at its peak")
			continue
		}
		if score, _ := p.reportedScore(c, pod, n); sourceKnown && score < sourceScore {
			reject(n, fmt.Sprintf("the scheduler would score it %d for the pod, the source %d", score, sourceScore))
			continue
		}
		ranked = append(ranked, candidate{node: n, count: r.count[n.Name], score: pl.Score})
	}
	slices.SortStableFunc(ranked, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(a.count, b.count), cmp.Compare(b.score, a.score), cmp.Compare(a.node.Name, b.node.Name))
	})
	for _, d := range ranked {
		if err := nodeutil.NodeFit(ctx, p.Handle.GetPodsAssignedToNodeFunc(), pod, d.node); err != nil {
			reject(d.node, err.Error())
			continue
		}
		return d.node, ""
	}
	if len(rejected) == 0 {
		return nil, "no other node"
	}
	return nil, strings.Join(rejected, "; ")
}

// evensOut reports whether moving a pod using amount from src to dest
// leaves dest no more loaded than src is before the move, by the load
// model's score: the move never makes a node hotter than the hotter of the
// two was. On nodes of one size that is any move towards equal counts; on
// nodes of different sizes it stops where usage, not the count, is even.
func (p *SpreadReplicas) evensOut(amount loadscore.Amount, src *v1.Node, srcLoad balance.NodeLoad, dest *v1.Node, destLoad balance.NodeLoad) bool {
	destAfter := p.Deps.Model.Place(amount, dest, destLoad, nil)
	return destAfter.Score >= p.Deps.Model.Place(loadscore.Amount{}, src, srcLoad, nil).Score
}

// reportedScore is how the scheduler's load model scores node for pod on
// the usage load-watcher reports, with the scheduler's estimate of the pod;
// false when that usage is unknown.
func (p *SpreadReplicas) reportedScore(c *cycle, pod *v1.Pod, node *v1.Node) (int64, bool) {
	load, ok := c.reported[node.Name]
	if !ok {
		return 0, false
	}
	return p.Deps.Model.Place(p.Deps.Model.EstimatePod(pod), node, load, nil).Score, true
}
