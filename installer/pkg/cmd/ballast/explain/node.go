package explain

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/policy"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
)

// NodeExplanation is what `ballast explain node` prints.
type NodeExplanation struct {
	Name string `json:"name"`
	// Usage is the node's usage in every window load-watcher keeps, per
	// resource; UsageError says why there is none.
	Usage      []WindowUsage `json:"usage,omitempty"`
	Stale      bool          `json:"stale,omitempty"`
	Invalid    string        `json:"invalid,omitempty"`
	UsageError string        `json:"usageError,omitempty"`
	// Scheduler and Descheduler are how each judges the node.
	Scheduler   *Judgement `json:"scheduler,omitempty"`
	Descheduler *Judgement `json:"descheduler,omitempty"`
	// Candidates are the pods the descheduler may move off the node while
	// it is hot: those placed by the schedulers it moves pods of.
	Candidates []string `json:"candidates,omitempty"`
	// Pinned are the pods the descheduler never moves off the node because
	// their volumes keep them there, with why.
	Pinned     []PinnedPod       `json:"pinned,omitempty"`
	Moves      []MoveExplanation `json:"moves,omitempty"`
	MovesError string            `json:"movesError,omitempty"`
	// Plan is the descheduler's plan for balance, as it concerns the
	// node; nil when it keeps none.
	Plan   *NodePlan `json:"plan,omitempty"`
	Events []Event   `json:"events,omitempty"`
}

// NodePlan is the descheduler's plan as `explain node` shows it: which
// plan, how far the cluster was from the best placement found, and the
// plan's moves still to make off or onto the node.
type NodePlan struct {
	ID       string    `json:"id"`
	Made     time.Time `json:"made"`
	Checked  time.Time `json:"checked"`
	Finished time.Time `json:"finished,omitempty"`
	Ended    string    `json:"ended,omitempty"`
	// Spread is the cluster's utilisation spread when the plan was last
	// judged, Best the best placement's, in points; Done the moves made.
	Spread float64 `json:"spread"`
	Best   float64 `json:"best"`
	Done   int     `json:"done"`
	// Target is how many pods of each workload the plan puts on the node.
	Target []moves.Placed `json:"target,omitempty"`
	// Moves are the plan's moves left that touch the node.
	Moves []moves.Step `json:"moves,omitempty"`
}

// nodePlan is plan as it concerns node.
func nodePlan(plan *moves.Rebalance, node string) *NodePlan {
	if plan == nil {
		return nil
	}
	out := &NodePlan{ID: plan.ID, Made: plan.Made, Checked: plan.Checked, Finished: plan.Finished, Ended: plan.Ended,
		Spread: plan.Now, Best: plan.NowBest, Done: plan.Done}
	for _, t := range plan.Target {
		if t.Node == node {
			out.Target = append(out.Target, t)
		}
	}
	for _, m := range plan.Moves {
		if m.From == node || m.To == node {
			out.Moves = append(out.Moves, m)
		}
	}
	return out
}

// printPlan writes p for people.
func printPlan(w io.Writer, p *NodePlan, now time.Time) {
	state := fmt.Sprintf("%d moves made, %d left here", p.Done, len(p.Moves))
	switch {
	case p.Ended != "":
		state = "ended: " + p.Ended
	case !p.Finished.IsZero():
		state = fmt.Sprintf("finished %s ago after %d moves", now.Sub(p.Finished).Round(time.Second), p.Done)
	}
	fmt.Fprintf(w, "\nThe descheduler's plan %s (%s): the cluster's utilisation spread %.1f points, the best placement found %.1f, judged %s ago\n",
		p.ID, state, p.Spread, p.Best, now.Sub(p.Checked).Round(time.Second))
	for _, t := range p.Target {
		fmt.Fprintf(w, "  target: %d pods of %s here\n", t.Pods, t.Workload)
	}
	for _, m := range p.Moves {
		fmt.Fprintf(w, "  next: a pod of %s off %s, onto %s\n", m.Workload, m.From, m.To)
	}
}

// PinnedPod is a pod its volumes keep on its node.
type PinnedPod struct {
	Pod string `json:"pod"`
	Why string `json:"why"`
}

// WindowUsage is one window's statistics of one resource, in percent.
type WindowUsage struct {
	Window   string         `json:"window"`
	Resource usage.Resource `json:"resource"`
	usage.Stats
}

// Judgement is how a component judges a node: the figure it reads per
// resource against its limits, and the verdict.
type Judgement struct {
	// Window and the figures' statistics are the component's settings.
	Window    string           `json:"window"`
	Resources []ResourceFigure `json:"resources"`
	Verdict   string           `json:"verdict"`
}

// ResourceFigure is a resource's figure against a component's limits.
type ResourceFigure struct {
	Resource  usage.Resource `json:"resource"`
	Statistic string         `json:"statistic"`
	Value     float64        `json:"value"`
	// Threshold is the scheduler's threshold; High and Low the
	// descheduler's limits (0 when unset).
	Threshold float64 `json:"threshold,omitempty"`
	High      float64 `json:"high,omitempty"`
	Low       float64 `json:"low,omitempty"`
	// Balanced says the descheduler's plan evens out this resource
	// (deviationThresholds).
	Balanced bool `json:"balanced,omitempty"`
}

func explainNode(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *installation.Flags, name string) error {
	in, err := connect(ctx, logger, flags)
	if err != nil {
		return err
	}
	if _, err := in.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err != nil {
		return fmt.Errorf("reading node %s: %w", name, err)
	}
	ex := NodeExplanation{Name: name}
	var nu usage.NodeUsage
	var snap *usage.Snapshot
	switch {
	case in.usage == nil:
		ex.UsageError = fmt.Sprint(in.usageErr)
	default:
		snap = in.usage.Snapshot
		var ok bool
		if nu, ok = snap.Nodes[name]; !ok {
			ex.UsageError = "load-watcher has no usage for this node"
		}
		ex.Stale, ex.Invalid = nu.Stale, nu.Invalid
		ex.Usage = windows(nu)
	}
	args, err := policy.BalanceArgs(in.policy)
	if in.policy != nil && err != nil {
		return fmt.Errorf("reading the descheduler's policy: %w", err)
	}
	schedulerNames := []string{"ballast-scheduler"}
	if args != nil && len(args.SchedulerNames) > 0 {
		schedulerNames = args.SchedulerNames
	}
	if in.schedulerConfig != nil {
		settings, _, err := loadmodel.SchedulerSettings(in.schedulerConfig, schedulerNames[0])
		if err != nil {
			return err
		}
		ex.Scheduler = judgeForScheduler(settings, nu, ex.UsageError == "" && !nu.Stale)
	}
	if args != nil {
		ex.Descheduler = judgeForDescheduler(args.HighThresholds, args.LowThresholds, args.DeviationThresholds,
			usage.Window(args.Window.Duration), args.ThresholdStatistics, nu, ex.UsageError == "" && !nu.Stale)
	}
	movable, pinned, err := candidates(ctx, in, name, schedulerNames)
	if err != nil {
		logger.Warnf("%v", err)
	}
	ex.Pinned = pinned
	if ex.Descheduler != nil && strings.HasPrefix(ex.Descheduler.Verdict, "hot") {
		ex.Candidates = movable
	}
	ex.Moves = explainMoves(in.moves, func(m balance.Move) bool { return m.Source == name || m.Destination == name || m.LandedOn == name })
	ex.Plan = nodePlan(in.plan, name)
	if in.movesErr != nil {
		ex.MovesError = in.movesErr.Error()
	}
	if ex.Events, err = eventsOf(ctx, in.client, "", "Node", name); err != nil {
		logger.Warnf("%v", err)
	}
	if flags.Output != "" {
		return cli.WriteDocument(streams.Out, ex, flags.Output)
	}
	return ex.Print(streams.Out, time.Now())
}

// windows lists a node's usage, shortest window first.
func windows(nu usage.NodeUsage) []WindowUsage {
	var out []WindowUsage
	for w, byResource := range nu.Windows {
		for _, r := range usage.Resources {
			if st, ok := byResource[r]; ok && st.Samples > 0 {
				out = append(out, WindowUsage{Window: w.String(), Resource: r, Stats: st})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		wi, _ := time.ParseDuration(out[i].Window)
		wj, _ := time.ParseDuration(out[j].Window)
		if wi != wj {
			return wi < wj
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

// judgeForScheduler is how LoadAware's filter sees the node, before a pod's
// estimate is added: over a threshold, it gets no new pod.
func judgeForScheduler(s loadmodel.Settings, nu usage.NodeUsage, usable bool) *Judgement {
	j := &Judgement{Window: s.UsageWindow().String()}
	if !usable {
		j.Verdict = "no usable usage: the scheduler places pods here by their requests"
		return j
	}
	stats := s.Statistics().Complete()
	var over []string
	for _, r := range usage.Resources {
		threshold, ok := s.Thresholds[r]
		st, has := nu.Get(s.UsageWindow(), r)
		if !ok || !has {
			continue
		}
		v := stats.Pick(r, st)
		j.Resources = append(j.Resources, ResourceFigure{Resource: r, Statistic: string(stats[r]), Value: v, Threshold: threshold})
		if v > threshold {
			over = append(over, fmt.Sprintf("%s %.1f%% > %g%%", r, v, threshold))
		}
	}
	j.Verdict = "takes new pods that keep it under its thresholds"
	if len(over) > 0 {
		j.Verdict = "gets no new pod: " + strings.Join(over, ", ")
	}
	return j
}

// judgeForDescheduler is how LoadAwareBalance sees the node: hot above a
// high threshold (its pods move), cool under every low threshold (it may
// receive pods moved off hot nodes). Below the high thresholds, the
// resources in balanced are evened out by the descheduler's plan
// (NodePlan), which may move pods off or onto any node.
func judgeForDescheduler(high, low, balanced balance.ResourceThresholds, window usage.Window, statistics loadmodel.Statistics,
	nu usage.NodeUsage, usable bool) *Judgement {
	j := &Judgement{Window: window.String()}
	if !usable {
		j.Verdict = "no usable usage: the descheduler moves nothing off it and nothing onto it"
		return j
	}
	stats := statistics.Complete()
	var hot []string
	cool := true
	for _, r := range usage.Resources {
		st, ok := nu.Get(window, r)
		if !ok {
			continue
		}
		v := stats.Pick(r, st)
		_, bal := balanced[r]
		f := ResourceFigure{Resource: r, Statistic: string(stats[r]), Value: v, High: high[r], Low: low[r], Balanced: bal}
		if h, ok := high[r]; ok && v > h {
			hot = append(hot, fmt.Sprintf("%s %.1f%% > %g%%", r, v, h))
		}
		if l, ok := low[r]; ok && v >= l {
			cool = false
		}
		j.Resources = append(j.Resources, f)
	}
	plan := ""
	if len(balanced) > 0 {
		plan = "; below its high thresholds the plan balances it"
	}
	switch {
	case len(hot) > 0:
		j.Verdict = "hot: " + strings.Join(hot, ", ") + "; its pods move to cool nodes"
	case cool:
		j.Verdict = "cool: it may receive pods moved off hot nodes" + plan
	default:
		j.Verdict = "neither hot nor cool: nothing moves off it for heat, and pods moved off hot nodes go to cooler ones" + plan
	}
	return j
}

// candidates are the pods on node that the descheduler may move — placed by
// one of schedulerNames, with a controller to replace them, not running to
// completion (balance.RunsToCompletion) — and those of
// them it never moves because their volumes keep them on node
// (balance.PinnedBy, as the descheduler judges them).
func candidates(ctx context.Context, in *installed, node string, schedulerNames []string) ([]string, []PinnedPod, error) {
	pods, err := in.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return nil, nil, fmt.Errorf("listing the pods on %s: %w", node, err)
	}
	var nodes []*corev1.Node
	if list, err := in.client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for i := range list.Items {
			nodes = append(nodes, &list.Items[i])
		}
	} else {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	vols := clientVolumes{ctx: ctx, client: in.client}
	var movable []string
	var pinned []PinnedPod
	for i := range pods.Items {
		p := &pods.Items[i]
		if _, ok := balance.WorkloadOf(p); !ok || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || balance.RunsToCompletion(p) {
			continue
		}
		if !slices.Contains(schedulerNames, schedulerNameOf(p)) {
			continue
		}
		if why := balance.PinnedBy(p, nodes, vols); why != "" {
			pinned = append(pinned, PinnedPod{Pod: p.Namespace + "/" + p.Name, Why: why})
			continue
		}
		movable = append(movable, p.Namespace+"/"+p.Name)
	}
	sort.Strings(movable)
	sort.Slice(pinned, func(i, j int) bool { return pinned[i].Pod < pinned[j].Pod })
	return movable, pinned, nil
}

// clientVolumes reads claims and volumes from the API server.
type clientVolumes struct {
	ctx    context.Context
	client kubernetes.Interface
}

func (c clientVolumes) Claim(namespace, name string) (*corev1.PersistentVolumeClaim, error) {
	return c.client.CoreV1().PersistentVolumeClaims(namespace).Get(c.ctx, name, metav1.GetOptions{})
}

func (c clientVolumes) Volume(name string) (*corev1.PersistentVolume, error) {
	return c.client.CoreV1().PersistentVolumes().Get(c.ctx, name, metav1.GetOptions{})
}

// Print writes the explanation as text and tables.
func (n NodeExplanation) Print(w io.Writer, now time.Time) error {
	fmt.Fprintf(w, "Node %s\n", n.Name)
	switch {
	case n.UsageError != "":
		fmt.Fprintf(w, "No usage from load-watcher: %s.\n", n.UsageError)
	case n.Invalid != "":
		fmt.Fprintf(w, "load-watcher refused this node's data: %s.\n", n.Invalid)
	case n.Stale:
		fmt.Fprintln(w, "This node's usage is stale: the scheduler places by requests here and the descheduler moves nothing.")
	}
	if len(n.Usage) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "WINDOW\tRESOURCE\tAVERAGE\tLATEST\tP95\tMAX\tSAMPLES")
		for _, u := range n.Usage {
			fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%.1f%%\t%.1f%%\t%.1f%%\t%d\n", u.Window, u.Resource, u.Avg, u.Latest, u.P95, u.Max, u.Samples)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, j := range []struct {
		who string
		j   *Judgement
	}{{"Scheduler", n.Scheduler}, {"Descheduler", n.Descheduler}} {
		if j.j == nil {
			continue
		}
		fmt.Fprintf(w, "\n%s (window %s): %s\n", j.who, j.j.Window, j.j.Verdict)
		for _, f := range j.j.Resources {
			fmt.Fprintf(w, "  %s %s %.1f%%", f.Resource, strings.ToLower(f.Statistic), f.Value)
			var limits []string
			if f.Threshold > 0 {
				limits = append(limits, fmt.Sprintf("threshold %g%%", f.Threshold))
			}
			if f.High > 0 {
				limits = append(limits, fmt.Sprintf("high %g%%", f.High))
			}
			if f.Low > 0 {
				limits = append(limits, fmt.Sprintf("low %g%%", f.Low))
			}
			if f.Balanced {
				limits = append(limits, "balanced by plan")
			}
			fmt.Fprintf(w, " (%s)\n", strings.Join(limits, ", "))
		}
	}
	if len(n.Candidates) > 0 {
		fmt.Fprintf(w, "\nPods the descheduler may move off it while it is hot: %s\n", strings.Join(n.Candidates, ", "))
	}
	if len(n.Pinned) > 0 {
		fmt.Fprintln(w, "\nPods the descheduler never moves off it:")
		for _, p := range n.Pinned {
			fmt.Fprintf(w, "  %s: %s\n", p.Pod, p.Why)
		}
	}
	if len(n.Moves) > 0 {
		fmt.Fprintln(w, "\nRecent moves off and onto it:")
		printMoves(w, n.Moves, now)
	}
	if n.MovesError != "" {
		fmt.Fprintf(w, "\nThe descheduler's moves could not be read: %s\n", n.MovesError)
	}
	if n.Plan != nil {
		printPlan(w, n.Plan, now)
	}
	if len(n.Events) > 0 {
		fmt.Fprintln(w, "\nEvents:")
		printEvents(w, n.Events, now)
	}
	return nil
}
