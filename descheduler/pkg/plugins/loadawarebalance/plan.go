package loadawarebalance

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/placement"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// maxPlanRounds bounds the search for the best placement; a round moves one
// pod or swaps two.
const maxPlanRounds = 10_000

// planProblem is the cycle's cluster as the placement search sees it: the
// nodes with fresh usage that take pods, and every pod of a workload on
// them, those that may not move held where they are (placement.Node.Fixed).
type planProblem struct {
	// resources are the resources balanced: those with a deviation
	// threshold.
	resources []usage.Resource
	nodes     []*v1.Node
	workloads []balance.Workload
	// pods holds, per node and workload, the pods that may move.
	pods [][][]*v1.Pod
	// amounts are what each movable pod uses; mean, per workload, what
	// one of its pods uses on average: what a replacement is expected to.
	amounts map[*v1.Pod]loadmodel.Amount
	mean    []loadmodel.Amount
	// replicas counts each workload's pods on the problem's nodes.
	replicas []int
	search   *placement.Problem
	current  [][]int
	// young are pods of the workloads first listed within the window that
	// replace no move (a scale, a rollout), that balancing may move and
	// that the metrics API does not report yet: what they use shows
	// nowhere. (What the window does not show yet of a pod it reports
	// counts on its node from that report, unsampled.) Pods it never
	// moves (a DaemonSet's on a node that joined or came back, a CronJob's
	// run) count in their node's load by estimate only (unsampled), as
	// they do once the window shows them: waiting for them would stop
	// planning after every join and reboot, and for as long as CronJobs run.
	young []*v1.Pod
}

// unmovable says why pod, of workload w on node, may not move for balance,
// or "" when it may.
func (p *LoadAwareBalance) unmovable(logger klog.Logger, c *cycle, pod *v1.Pod, w balance.Workload, node string) string {
	s := p.Deps.Store
	switch {
	case !*p.args.SurgeSingleReplica && p.onlyPod(logger, pod):
		// Evicting it would leave the workload down (move).
		return "its workload's only pod"

	case !p.PodFilter(pod):
		return "filtered"
	case !p.PlacedByBallast(pod):
		return "another scheduler"
	case s.MovedOnto(w, node, c.reshaped, c.now, p.args.BalanceCooldown.Duration):
		// Since the nodes last changed: a plan for the cluster as it is now
		// may move on from what an earlier one did for another.
		return "moved onto the node within the balance cooldown"
	case s.Replaces(pod.UID):
		// Whichever move it is matched with (several of one workload may
		// be under way), it is one's replacement: moving it again would
		// undo that move.
		return "the replacement of a move"
	case s.Bounced(w, node, c.now, p.args.EvictionCooldown.Duration):
		return "its replacement landed back on the node"
	}
	return ""
}

// newPlanProblem reads the cycle's cluster. receiving are the nodes that
// may take a pod: neither hot nor swinging over a high threshold.
func (p *LoadAwareBalance) newPlanProblem(ctx context.Context, logger klog.Logger, c *cycle, receiving map[string]bool) *planProblem {
	pp := &planProblem{amounts: map[*v1.Pod]loadmodel.Amount{}}
	for r := range p.args.DeviationThresholds {
		pp.resources = append(pp.resources, r)
	}
	slices.Sort(pp.resources)
	for _, n := range c.nodes {
		if _, ok := c.loads[n.Name]; ok && !n.Spec.Unschedulable && !c.swinging[n.Name] {
			pp.nodes = append(pp.nodes, n)
		}
	}
	widx := map[balance.Workload]int{}
	var reps []*v1.Pod
	// used is what the pods of no workload request of each node: the
	// placement counts the others' requests itself.
	used := make([][3]int64, len(pp.nodes))
	type placed struct {
		pod   *v1.Pod
		w     int
		fixed bool
	}
	onNode := make([][]placed, len(pp.nodes))
	listed := make([][]*v1.Pod, len(pp.nodes))
	workloadPods := map[types.UID]balance.ListedPod{}
	for i, n := range pp.nodes {
		all, err := p.PodsOn(n.Name, nil)
		if err != nil {
			logger.Error(err, "Listing pods to plan", "node", klog.KObj(n))
		}
		// The informer lists in no set order; the search breaks ties by
		// the order of the workloads and pods: the same cluster, the same
		// plan.
		slices.SortFunc(all, func(a, b *v1.Pod) int {
			return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
		})
		listed[i] = all
		for _, pod := range all {
			if w, ok := balance.WorkloadOf(pod); ok {
				workloadPods[pod.UID] = balance.ListedPod{Workload: w, Node: n.Name}
			}
		}
	}
	listing := p.Deps.Store.Listed(workloadPods, c.now)
	for i, n := range pp.nodes {
		all := slices.DeleteFunc(listed[i], func(pod *v1.Pod) bool { return listing.Later.Has(pod.UID) })
		var candidates []*v1.Pod
		for _, pod := range all {
			w, ok := balance.WorkloadOf(pod)
			if !ok {
				// No workload to replace it: part of the node's base.
				r := loadmodel.PodRequests(pod)
				used[i] = [3]int64{used[i][0] + r.MilliCPU, used[i][1] + r.Memory, used[i][2] + 1}
				continue
			}
			if _, ok := widx[w]; !ok {
				widx[w] = len(pp.workloads)
				pp.workloads = append(pp.workloads, w)
				reps = append(reps, pod)
			}
			if at, ok := listing.New[pod.UID]; ok && c.now.Sub(at) < p.args.Window.Duration && p.PodFilter(pod) && !p.Deps.Measured(ctx, pod) {
				pp.young = append(pp.young, pod)
			}
			if at, ok := listing.Arrived[pod.UID]; ok && c.now.Sub(at) < p.args.BalanceCooldown.Duration && !at.Before(c.reshaped) {
				// Whichever move it replaces, moving it again would undo it
				// — unless the nodes changed since (as MovedOnto): a plan
				// for the cluster as it is now may move on from what an
				// earlier one did for another.
				continue
			}
			if p.unmovable(logger, c, pod, w, n.Name) == "" {
				candidates = append(candidates, pod)
			}
		}
		movable := p.WithoutPinned(logger, PluginName, p.WithoutGrowing(logger, PluginName, candidates), c.nodes)
		for _, pod := range all {
			if w, ok := balance.WorkloadOf(pod); ok {
				onNode[i] = append(onNode[i], placed{pod: pod, w: widx[w], fixed: !slices.Contains(movable, pod)})
			}
		}
	}
	nw := len(pp.workloads)
	pp.replicas = make([]int, nw)
	pp.mean = make([]loadmodel.Amount, nw)
	pp.pods = make([][][]*v1.Pod, len(pp.nodes))
	pp.current = make([][]int, len(pp.nodes))
	fixed := make([][]int, len(pp.nodes))
	for i := range pp.nodes {
		pp.pods[i] = make([][]*v1.Pod, nw)
		pp.current[i] = make([]int, nw)
		fixed[i] = make([]int, nw)
		for _, pl := range onNode[i] {
			pp.current[i][pl.w]++
			pp.replicas[pl.w]++
			a := p.Deps.PodAmount(ctx, PluginName, pl.pod)
			pp.mean[pl.w].MilliCPU += a.MilliCPU
			pp.mean[pl.w].Memory += a.Memory
			if pl.fixed {
				fixed[i][pl.w]++
				continue
			}
			pp.amounts[pl.pod] = a
			pp.pods[i][pl.w] = append(pp.pods[i][pl.w], pl.pod)
		}
	}
	for w := range pp.mean {
		pp.mean[w].MilliCPU /= int64(max(pp.replicas[w], 1))
		pp.mean[w].Memory /= int64(max(pp.replicas[w], 1))
	}

	shares := sizeShares(pp.nodes)
	// Dimension 0 is the node's utilisation, the mean of the balanced
	// resources, which the search evens out; each resource follows, held
	// under its high threshold only.
	dims := 1 + len(pp.resources)
	weights := make([]float64, dims)
	weights[0] = 1
	sp := &placement.Problem{Dims: dims, Weights: weights, Workloads: make([]placement.Workload, nw), Nodes: make([]placement.Node, len(pp.nodes))}
	for w, rep := range reps {
		r := loadmodel.PodRequests(rep)
		sp.Workloads[w] = placement.Workload{Name: pp.workloads[w].String(), Requests: [3]int64{r.MilliCPU, r.Memory, 1}}
	}
	fits := p.fitsIgnoringRequests(ctx, reps, pp.nodes, receiving)
	eligible := make([]int, nw)
	for w := range nw {
		for i := range pp.nodes {
			if fits[i][w] || pp.current[i][w] > 0 {
				eligible[w]++
			}
		}
	}
	for i, n := range pp.nodes {
		load := c.loads[n.Name].Add(c.unsampled[n.Name], 1)
		base := pp.vector(load)
		limit := make([]float64, dims)
		limit[0] = math.Inf(1)
		for d, r := range pp.resources {
			limit[1+d] = 100
			if h, ok := p.args.HighThresholds[r]; ok {
				limit[1+d] = h
			}
			// Held under the threshold at its window peak too: a node
			// whose load rises and falls (a wave, a job) keeps room for
			// the rise.
			limit[1+d] -= max(0, c.swings[n.Name][r])
		}
		adds := make([][][]float64, nw)
		for w := range nw {
			one := pp.vector(p.Deps.Model.Share(pp.mean[w], n))
			for d, v := range one {
				base[d] -= float64(pp.current[i][w]) * v
			}
			most := pp.current[i][w]
			if fits[i][w] && !p.Deps.Store.MovedOff(pp.workloads[w], n.Name, c.now, p.args.BalanceCooldown.Duration) {
				most = max(most, replicaCap(pp.replicas[w], eligible[w], shares[n.Name]))
			}
			if most == 0 {
				continue
			}
			adds[w] = make([][]float64, most)
			for k := range adds[w] {
				adds[w][k] = one
			}
		}
		alloc := n.Status.Allocatable
		sp.Nodes[i] = placement.Node{Name: n.Name, Base: base, Limit: limit, Adds: adds, Fixed: fixed[i], Used: used[i],
			Allocatable: [3]int64{alloc.Cpu().MilliValue(), alloc.Memory().Value(), alloc.Pods().Value()}}
	}
	pp.search = sp
	return pp
}

// replicaCap is the most pods of a workload of replicas pods, which may go
// to eligible nodes, a plan puts on a node whose share of the cluster's
// size is share: its size's share or one more than an even share,
// whichever is more, and never all of them where there are two nodes for
// them. A node that fails takes no more of the workload with it than that.
func replicaCap(replicas, eligible int, share float64) int {
	even := (replicas + eligible - 1) / max(eligible, 1)
	most := max(int(math.Ceil(float64(replicas)*share)), even+1)
	if replicas >= 2 && eligible >= 2 {
		most = min(most, replicas-1)
	}
	return most
}

// vector is load as the search's dimensions: the mean of the balanced
// resources, then each of them.
func (pp *planProblem) vector(load balance.NodeLoad) []float64 {
	out := make([]float64, 1+len(pp.resources))
	for d, r := range pp.resources {
		out[1+d] = load[r]
		out[0] += load[r] / float64(len(pp.resources))
	}
	return out
}

// fitsIgnoringRequests reports, per node and workload, whether the
// scheduler's filters would place the workload's pod (reps[w]) on a node
// that may receive pods, its requests left out: the search counts requests
// itself, as the pods it moves free them.
func (p *LoadAwareBalance) fitsIgnoringRequests(ctx context.Context, reps []*v1.Pod, nodes []*v1.Node, receiving map[string]bool) [][]bool {
	fit := p.Fit()
	out := make([][]bool, len(nodes))
	bare := make([]*v1.Pod, len(reps))
	for w, pod := range reps {
		bare[w] = withoutRequests(pod)
	}
	var judged []int
	var on []*v1.Node
	for i, n := range nodes {
		out[i] = make([]bool, len(reps))
		if receiving[n.Name] {
			judged, on = append(judged, i), append(on, n)
		}
	}
	for w, pod := range bare {
		for k, err := range fit(ctx, pod, on) {
			out[judged[k]][w] = err == nil
		}
	}
	return out
}

// withoutRequests is a copy of pod that requests nothing.
func withoutRequests(pod *v1.Pod) *v1.Pod {
	out := pod.DeepCopy()
	for _, cs := range [][]v1.Container{out.Spec.Containers, out.Spec.InitContainers} {
		for i := range cs {
			cs[i].Resources.Requests, cs[i].Resources.Limits = nil, nil
		}
	}
	out.Spec.Overhead = nil
	out.Spec.Resources = nil
	return out
}

// plannedMove is one move of a plan: a pod of workload from one node to
// another (indices of the plan's problem).
type plannedMove struct {
	workload, from, to int
}

// best searches the best placement reachable from where the cluster is:
// single moves and swaps from the current placement, or from a placement
// made from scratch when that ends better (the current one may sit in a
// local optimum).
func (pp *planProblem) best() *placement.Placement {
	out := placement.FromCounts(pp.search, pp.current)
	out.Improve(maxPlanRounds)
	totals := make([]int, len(pp.workloads))
	fixedOnly := placement.New(pp.search)
	for i, n := range pp.search.Nodes {
		for w, c := range pp.current[i] {
			totals[w] += c - n.Fixed[w]
			for range n.Fixed[w] {
				fixedOnly.Add(i, w)
			}
		}
	}
	if fresh := fixedOnly; fresh.Fill(totals) == 0 {
		fresh.Improve(maxPlanRounds)
		if fresh.Score().Better(out.Score()) {
			out = fresh
		}
	}
	return out
}

// steps are the moves from the current placement towards target, in the
// order that lowers the score most, a move at a time (or two pods trading
// places when no single move does), until the cluster is within half the
// margin of the target (a cluster left at the margin's edge would be
// planned again at the next cycle's noise); cut after the move that
// reached the lowest spread. It returns them and the spread they leave.
func (pp *planProblem) steps(target *placement.Placement, margin float64) ([]plannedMove, float64) {
	need := make([][]int, len(pp.current))
	for i := range need {
		need[i] = make([]int, len(pp.workloads))
		for w := range need[i] {
			need[i][w] = target.Count[i][w] - pp.current[i][w]
		}
	}
	cur := placement.FromCounts(pp.search, pp.current)
	goal := target.Score().Spread + margin/2
	lowest, keep := cur.Score().Spread, 0
	var out []plannedMove
	for cur.Score().Spread > goal {
		step := nextMoves(cur, need)
		if step == nil {
			break
		}
		for _, mv := range step {
			cur.Remove(mv.from, mv.workload)
			cur.Add(mv.to, mv.workload)
			need[mv.from][mv.workload]++
			need[mv.to][mv.workload]--
			out = append(out, mv)
		}
		cur.Recompute()
		if s := cur.Score().Spread; s < lowest-1e-9 {
			lowest, keep = s, len(out)
		}
	}
	return out[:keep], lowest
}

// nextMoves returns the move towards the target (a pod of a workload off a
// node with more of it than the target, onto one with fewer) that lowers
// cur's score most; when none does alone, the pair of such moves that
// lowers it most together (two pods trading places); nil when no pair
// does either.
func nextMoves(cur *placement.Placement, need [][]int) []plannedMove {
	var flows []plannedMove
	for w := range need[0] {
		for a := range need {
			if need[a][w] >= 0 || !cur.CanRemove(a, w) {
				continue
			}
			for b := range need {
				if need[b][w] > 0 {
					flows = append(flows, plannedMove{workload: w, from: a, to: b})
				}
			}
		}
	}
	score := cur.Score()
	var best []plannedMove
	for _, f := range flows {
		if !cur.CanAdd(f.to, f.workload) {
			continue
		}
		cur.Remove(f.from, f.workload)
		cur.Add(f.to, f.workload)
		if s := cur.Score(); s.Better(score) {
			score, best = s, []plannedMove{f}
		}
		cur.Remove(f.to, f.workload)
		cur.Add(f.from, f.workload)
	}
	if best != nil {
		return best
	}
	for i, f := range flows {
		for _, g := range flows[i+1:] {
			if g.workload == f.workload || (g.from != f.to && g.to != f.from) {
				continue
			}
			cur.Remove(f.from, f.workload)
			cur.Remove(g.from, g.workload)
			if cur.CanAdd(f.to, f.workload) {
				cur.Add(f.to, f.workload)
				if cur.CanAdd(g.to, g.workload) {
					cur.Add(g.to, g.workload)
					if s := cur.Score(); s.Better(score) {
						score, best = s, []plannedMove{f, g}
					}
					cur.Remove(g.to, g.workload)
				}
				cur.Remove(f.to, f.workload)
			}
			cur.Add(g.from, g.workload)
			cur.Add(f.from, f.workload)
		}
	}
	return best
}

// targetOf reads a kept plan's target into pp's terms, or says how the
// cluster changed since the plan was made: a node joined, left or stopped
// taking pods, a workload was scaled or went away.
func (pp *planProblem) targetOf(plan *moves.Rebalance) (*placement.Placement, string) {
	nodes := map[string]int{}
	for i, n := range pp.nodes {
		nodes[n.Name] = i
	}
	for _, name := range plan.Nodes {
		if _, ok := nodes[name]; !ok {
			return nil, "node " + name + " left or no longer takes pods"
		}
	}
	if len(plan.Nodes) != len(pp.nodes) {
		for _, n := range pp.nodes {
			if !slices.Contains(plan.Nodes, n.Name) {
				return nil, "node " + n.Name + " joined or takes pods again"
			}
		}
	}
	widx := map[balance.Workload]int{}
	for w, wl := range pp.workloads {
		widx[wl] = w
	}
	counts := make([][]int, len(pp.nodes))
	for i := range counts {
		counts[i] = make([]int, len(pp.workloads))
	}
	totals := make([]int, len(pp.workloads))
	for _, t := range plan.Target {
		w, ok := widx[t.Workload]
		if !ok {
			return nil, "workload " + t.Workload.String() + " has no pod left"
		}
		counts[nodes[t.Node]][w] += t.Pods
		totals[w] += t.Pods
	}
	for w, wl := range pp.workloads {
		if totals[w] != pp.replicas[w] {
			return nil, fmt.Sprintf("workload %s has %d pods, the plan %d", wl, pp.replicas[w], totals[w])
		}
	}
	return placement.FromCounts(pp.search, counts), ""
}

// rebalance moves the cluster towards the best placement the search finds
// from where it is, by a plan kept over cycles. A plan is made when the
// cluster's utilisation spread is more than the margin above the best
// placement's; it is kept until its moves are made or the cluster changes
// (a node joins, leaves or is cordoned, a workload is scaled, or usage
// shifts so that its target is no longer within the margin of the best
// placement found), and a cluster within the margin of its best placement
// is left alone. Each cycle makes as many of its moves as the cycle's
// budgets allow: the eviction limits, and no more of a workload's pods at
// once than its rolling update takes down.
func (p *LoadAwareBalance) rebalance(ctx context.Context, logger klog.Logger, c *cycle, dests destinations) {
	if len(p.args.DeviationThresholds) == 0 {
		return
	}
	receiving := map[string]bool{}
	for _, n := range dests.relief {
		receiving[n.Name] = true
	}
	pp := p.newPlanProblem(ctx, logger, c, receiving)
	if len(pp.nodes) < 2 || len(pp.workloads) == 0 {
		return
	}
	s := p.Deps.Store
	margin := *p.args.PlanMargin
	now := placement.FromCounts(pp.search, pp.current).Score().Spread
	best := pp.best()
	bestSpread := best.Score().Spread
	p.Deps.Metrics.Spread.WithLabelValues(PluginName, "current").Set(now)
	p.Deps.Metrics.Spread.WithLabelValues(PluginName, "best").Set(bestSpread)

	plan := s.Plan()
	var target *placement.Placement
	if plan != nil && plan.Finished.IsZero() && plan.Ended == "" {
		t, changed := pp.targetOf(plan)
		if changed == "" && t.Score().Spread > bestSpread+margin {
			changed = fmt.Sprintf("usage changed: its target's spread is %.1f points, the best placement's %.1f", t.Score().Spread, bestSpread)
		}
		if changed != "" {
			logger.Info("The cluster changed since the plan was made; planning again", "plan", plan.ID, "change", changed)
			plan.Ended = "the cluster changed: " + changed
		} else {
			target = t
		}
	}
	if target == nil {
		if len(pp.young) > 0 {
			// A new plan counts on what every pod uses: it waits until the
			// metrics API or the window shows the pods of a scale or a
			// rollout. (Holding them
			// where they are and planning around them moved pods for a
			// cluster about to change: waves-and-scaling ended 1.46× the
			// default scheduler's spread that way, 0.83× waiting.)
			logger.V(2).Info("Pods appeared within the window; planning waits until their usage shows", "pods", klog.KObjSlice(pp.young),
				"spread", round1(now), "best", round1(bestSpread))
			return
		}
		if now-bestSpread <= margin {
			// The kept plan is left as it ended: judging it again every
			// cycle would rewrite the moves ConfigMap every cycle for
			// nothing; the gauges say where the cluster is now.
			logger.V(2).Info("Cluster within the margin of the best placement found; nothing to move", "spread", round1(now), "best", round1(bestSpread),
				"margin", margin)
			return
		}
		target = best
		plan = &moves.Rebalance{ID: nextPlanID(s.Plan()), Made: c.now, Spread: now, Best: bestSpread}
		for i, n := range pp.nodes {
			plan.Nodes = append(plan.Nodes, n.Name)
			for w, count := range target.Count[i] {
				if count > 0 {
					plan.Target = append(plan.Target, moves.Placed{Node: n.Name, Workload: pp.workloads[w], Pods: count})
				}
			}
		}
	}
	steps, after := pp.steps(target, margin)
	if plan.Done == 0 {
		plan.After = after
	}
	plan.Checked, plan.Now, plan.NowBest = c.now, now, bestSpread
	s.SetPlan(plan)
	if len(steps) == 0 {
		logger.Info("Plan finished: the cluster is as near its target as moves take it", "plan", plan.ID, "spread", round1(now), "best", round1(bestSpread))
		plan.Finished, plan.Moves = c.now, nil
		return
	}
	logger.Info("Moves planned towards the best placement found", "plan", plan.ID, "spread", round1(now), "best", round1(bestSpread),
		"after", round1(after), "moves", len(steps))
	left := p.makeSteps(ctx, logger, c, pp, plan, steps)
	plan.Moves = plan.Moves[:0]
	for _, mv := range left {
		plan.Moves = append(plan.Moves, moves.Step{Workload: pp.workloads[mv.workload], From: pp.nodes[mv.from].Name, To: pp.nodes[mv.to].Name})
	}
	if len(left) == 0 {
		plan.Finished = c.now
	}
}

// makeSteps makes the plan's moves this cycle's budgets allow and returns
// those left for later cycles.
func (p *LoadAwareBalance) makeSteps(ctx context.Context, logger klog.Logger, c *cycle, pp *planProblem, plan *moves.Rebalance, steps []plannedMove) []plannedMove {
	perWorkload := map[int]int{}
	var left []plannedMove
	for k, mv := range steps {
		if c.evicted >= *p.args.MaxEvictionsPerCycle {
			logger.V(2).Info("Eviction limit per cycle reached; the rest of the plan waits", "limit", *p.args.MaxEvictionsPerCycle, "left", len(steps)-k)
			c.stopped = true
			return append(left, steps[k:]...)
		}
		source, dest := pp.nodes[mv.from], pp.nodes[mv.to]
		wl := pp.workloads[mv.workload]
		mlogger := logger.WithValues("plan", plan.ID, "workload", wl, "node", klog.KObj(source), "destination", dest.Name)
		if c.byNode[source.Name] >= *p.args.MaxEvictionsPerNode {
			mlogger.V(2).Info("Eviction limit per node reached; the move waits")
			left = append(left, mv)
			continue
		}
		if perWorkload[mv.workload] >= balance.BalanceMoves(pp.replicas[mv.workload]) {
			mlogger.V(2).Info("Workload had as many pods moved this cycle as its rolling update restarts at once; the move waits",
				"perCycle", balance.BalanceMoves(pp.replicas[mv.workload]))
			left = append(left, mv)
			continue
		}
		pod := p.pickPod(pp, mv, source)
		if pod == nil {
			continue
		}
		podLogger := mlogger.WithValues("pod", klog.KObj(pod))
		if c.byNamespace[pod.Namespace] >= *p.args.MaxEvictionsPerNamespace {
			p.skip(podLogger, balance.SkipLimit, "namespace eviction limit reached; the move waits")
			left = append(left, mv)
			continue
		}
		if err := p.Fit()(ctx, pod, []*v1.Node{dest})[0]; err != nil {
			p.skip(podLogger, balance.SkipNoDestination, "the scheduler would not place the pod on the planned node; the move is dropped", "err", err.Error())
			continue
		}
		sourceLoad := p.Deps.Model.Share(pp.amounts[pod], source)
		destLoad := p.Deps.Model.Share(pp.amounts[pod], dest)
		note := planNote(pp, plan, plan.Done+1, plan.Done+len(steps)-k, c.loads[source.Name], c.loads[dest.Name], sourceLoad, destLoad, source.Name, dest.Name)
		moved, stop := p.move(ctx, podLogger, c, eviction{pod: pod, workload: wl, source: source, destination: dest,
			sourceLoad: sourceLoad, destinationLoad: destLoad, note: note, planned: true,
			reason:       "plan " + plan.ID + ": towards the best placement; expected destination " + dest.Name,
			metricReason: "plan"})
		if moved {
			plan.Done++
			perWorkload[mv.workload]++
			pp.pods[mv.from][mv.workload] = slices.DeleteFunc(pp.pods[mv.from][mv.workload], func(o *v1.Pod) bool { return o == pod })
		} else {
			left = append(left, mv)
		}
		if stop {
			return append(left, steps[k+1:]...)
		}
	}
	return left
}

// pickPod is the pod of the move's workload on source whose usage is
// closest to the workload's mean, which the plan assumed.
func (p *LoadAwareBalance) pickPod(pp *planProblem, mv plannedMove, source *v1.Node) *v1.Pod {
	pods := pp.pods[mv.from][mv.workload]
	if len(pods) == 0 {
		return nil
	}
	mean := p.Deps.Model.Share(pp.mean[mv.workload], source)
	dist := func(pod *v1.Pod) float64 {
		share := p.Deps.Model.Share(pp.amounts[pod], source)
		var d float64
		for _, r := range pp.resources {
			d += math.Abs(share[r] - mean[r])
		}
		return d
	}
	return slices.MinFunc(pods, func(a, b *v1.Pod) int { return cmp.Or(cmp.Compare(dist(a), dist(b)), cmp.Compare(a.Name, b.Name)) })
}

// planNote says which plan a move belongs to, how far the cluster is from
// its best placement, and what the move does to both nodes.
func planNote(pp *planProblem, plan *moves.Rebalance, k, of int, sourceNow, destNow, sourceLoad, destLoad balance.NodeLoad, source, dest string) string {
	var after []string
	for _, r := range pp.resources {
		after = append(after, fmt.Sprintf("%s %s %.1f%% → %.1f%%", source, r, sourceNow[r], sourceNow[r]-sourceLoad[r]))
	}
	for _, r := range pp.resources {
		after = append(after, fmt.Sprintf("%s %s %.1f%% → %.1f%%", dest, r, destNow[r], destNow[r]+destLoad[r]))
	}
	return fmt.Sprintf("Moved off %s by LoadAwareBalance: move %d of %d of plan %s, towards the best placement found "+
		"(utilisation spread now %.1f points, best %.1f, after the plan %.1f); expected destination %s; expected after the move: %s",
		source, k, of, plan.ID, plan.Now, plan.NowBest, plan.After, dest, strings.Join(after, ", "))
}

// nextPlanID numbers plans from 1, the next after the plan kept (read
// back after a restart too). A number, not the time the plan was made:
// Made says that, and the notes that name a plan stay the same from one
// run of a simulation to the next.
func nextPlanID(kept *moves.Rebalance) string {
	n := 0
	if kept != nil {
		n, _ = strconv.Atoi(kept.ID)
	}
	return strconv.Itoa(n + 1)
}

func round1(v float64) string { return fmt.Sprintf("%.1f", v) }
