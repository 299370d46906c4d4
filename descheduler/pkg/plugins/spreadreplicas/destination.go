package spreadreplicas

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// pickDestination returns the node the evicted replica is expected on, or
// nil and why each node was rejected. A destination holds at least
// minDifference fewer replicas of w than the source, has fresh usage, is
// under every high threshold, on average and at its window peak, and stays
// under them with the pod, judged and scored by the scheduler's load model,
// was not the source of a recent move of w (that would undo it) and accepts
// the pod the way the scheduler would (balance.PickDestination). It must
// also score at least as well as the source on the usage load-watcher
// reports, which is what the scheduler places the replacement on: otherwise
// the scheduler would put it back on the source and the move would only
// churn. And it must not end more loaded than the source (evensOut), on
// average nor at the window peaks, so replicas follow node sizes instead of
// pulling against LoadAwareBalance, and do not move onto a node whose load
// comes and goes (a backup job) from one whose load does not.
// Every node is judged with the pods that started on it since its window
// was sampled (unsampledOn), as the scheduler counts the pods bound since.
// The fewest replicas win, then the best score.
func (p *SpreadReplicas) pickDestination(ctx context.Context, c *cycle, w balance.Workload, r *replicas, pod *v1.Pod, amount loadmodel.Amount, src *v1.Node, nodes []*v1.Node) (*v1.Node, string) {
	source := src.Name
	sourceScore, sourceKnown := p.reportedScore(ctx, c, pod, src)
	srcLoad, srcKnown := p.loadOf(ctx, c, c.loads, src)
	srcPeak, srcPeakKnown := p.loadOf(ctx, c, c.peaks, src)
	judge := func(n *v1.Node) (int64, []int64, string) {
		if r.count[n.Name] > r.count[source]-minDifference {
			return 0, nil, fmt.Sprintf("holds %d replicas, source %d", r.count[n.Name], r.count[source])
		}
		load, ok := p.loadOf(ctx, c, c.loads, n)
		if !ok {
			return 0, nil, "no fresh usage"
		}
		if over := p.args.HighThresholds.Above(load); len(over) > 0 {
			return 0, nil, fmt.Sprintf("hot (%v)", over)
		}
		peak, _ := p.loadOf(ctx, c, c.peaks, n)
		if over := p.args.HighThresholds.Above(peak); len(over) > 0 {
			return 0, nil, fmt.Sprintf("hot at its peak in the window (%v)", over)
		}
		if p.Deps.Store.MovedOff(w, n.Name, c.now, p.args.BalanceCooldown.Duration) {
			return 0, nil, "the workload was moved off it within the cooldown"
		}
		pl := p.Deps.Model.Place(amount, n, load, p.args.HighThresholds)
		if !pl.Fits {
			return 0, nil, pl.Reason
		}
		if srcKnown && !p.evensOut(amount, src, srcLoad, n, load) {
			return 0, nil, "it would end more loaded than the source"
		}
		if srcPeakKnown && !p.evensOut(amount, src, srcPeak, n, peak) {
			return 0, nil, "at its peak in the window it would end more loaded than the source at its peak"
		}
		if score, _ := p.reportedScore(ctx, c, pod, n); sourceKnown && score < sourceScore {
			return 0, nil, fmt.Sprintf("the scheduler would score it %d for the pod, the source %d", score, sourceScore)
		}
		return pl.Score, []int64{int64(r.count[n.Name]), -pl.Score}, ""
	}
	dest, why := balance.PickDestination(ctx, pod, source, nodes, p.Fit(), judge, "no other node")
	if dest == nil {
		return nil, why
	}
	return dest.Node, ""
}

// evensOut reports whether moving a pod using amount from src to dest
// leaves dest no more loaded than src is before the move, by the load
// model's score: the move never makes a node hotter than the hotter of the
// two was. On nodes of one size that is any move towards equal counts; on
// nodes of different sizes it stops where usage, not the count, is even.
func (p *SpreadReplicas) evensOut(amount loadmodel.Amount, src *v1.Node, srcLoad balance.NodeLoad, dest *v1.Node, destLoad balance.NodeLoad) bool {
	destAfter := p.Deps.Model.Place(amount, dest, destLoad, nil)
	return destAfter.Score >= p.Deps.Model.Place(loadmodel.Amount{}, src, srcLoad, nil).Score
}

// reportedScore is how the scheduler's load model scores node for pod on
// the usage load-watcher reports and the pods started since (the scheduler
// counts those bound since the sample), with the scheduler's estimate of
// the pod; false when that usage is unknown.
func (p *SpreadReplicas) reportedScore(ctx context.Context, c *cycle, pod *v1.Pod, node *v1.Node) (int64, bool) {
	load, ok := p.loadOf(ctx, c, c.reported, node)
	if !ok {
		return 0, false
	}
	return p.Deps.Model.Place(p.Deps.Model.EstimatePod(pod), node, load, nil).Score, true
}

// loadOf returns node's load in loads with what the pods that started on it
// since its window was sampled add; false when loads does not hold it.
func (p *SpreadReplicas) loadOf(ctx context.Context, c *cycle, loads map[string]balance.NodeLoad, node *v1.Node) (balance.NodeLoad, bool) {
	load, ok := loads[node.Name]
	if !ok {
		return nil, false
	}
	return load.Add(p.unsampledOn(ctx, c, node), 1), true
}

// unsampledOn is what the pods that started on node since its window was
// sampled add to its usage (balance.Plugin.Unsampled), worked out once per
// cycle and node: moves of this cycle are in loads already.
func (p *SpreadReplicas) unsampledOn(ctx context.Context, c *cycle, node *v1.Node) balance.NodeLoad {
	if l, ok := c.unsampled[node.Name]; ok {
		return l
	}
	l := p.Unsampled(ctx, node, c.sampled[node.Name], c.window)
	c.unsampled[node.Name] = l
	return l
}
