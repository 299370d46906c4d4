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

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"
)

// PodExplanation is what `ballast explain pod` prints.
type PodExplanation struct {
	Namespace     string `json:"namespace"`
	Name          string `json:"name"`
	SchedulerName string `json:"schedulerName"`
	// Node is where the pod is bound; empty while Pending.
	Node  string `json:"node,omitempty"`
	Phase string `json:"phase"`
	// Now is where the scheduler would place the pod now, and why.
	Now *explanation.Explanation `json:"now,omitempty"`
	// NotBallast says why the pod is not Ballast's to place.
	NotBallast string `json:"notBallast,omitempty"`
	// UsageTime is when the usage the scheduler places by was assembled;
	// UsageError says why there is none (every node is then placed by
	// requests).
	UsageTime  *metav1.Time `json:"usageTime,omitempty"`
	UsageError string       `json:"usageError,omitempty"`
	// Workload is the pod's controller; Moves the descheduler's recent
	// moves of its pods.
	Workload string            `json:"workload,omitempty"`
	Moves    []MoveExplanation `json:"moves,omitempty"`
	// MovesError says why the moves could not be read.
	MovesError string  `json:"movesError,omitempty"`
	Events     []Event `json:"events"`
}

func explainPod(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *installation.Flags, ns, name string, newScheduler NewScheduler) error {
	in, err := connect(ctx, logger, flags)
	if err != nil {
		return err
	}
	ex, err := podExplanation(ctx, in, ns, name, newScheduler(in.restConfig, in.client, flags.Namespace, flags.ReleaseName))
	if err != nil {
		return err
	}
	if ex.Events, err = eventsOf(ctx, in.client, ns, "Pod", name); err != nil {
		logger.Warnf("%v", err)
	}
	if flags.Output != "" {
		return cli.WriteDocument(streams.Out, ex, flags.Output)
	}
	return ex.Print(streams.Out, time.Now())
}

// podExplanation says where pod ns/name is, where the release's scheduler
// would place it now and why, and the moves of its workload.
func podExplanation(ctx context.Context, in *installed, ns, name string, scheduler Scheduler) (PodExplanation, error) {
	pod, err := in.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return PodExplanation{}, fmt.Errorf("reading pod %s/%s: %w", ns, name, err)
	}
	ex := PodExplanation{Namespace: ns, Name: name, SchedulerName: pod.Spec.SchedulerName, Node: pod.Spec.NodeName, Phase: string(pod.Status.Phase)}
	switch {
	case in.schedulerConfig == nil:
		ex.NotBallast = fmt.Sprintf("release %s in namespace %s runs no scheduler (no ConfigMap with its configuration)", in.release, in.namespace)
	default:
		resp, err := scheduler.ExplainPod(ctx, ns, name)
		if err != nil {
			return PodExplanation{}, fmt.Errorf("explaining pod %s/%s: %w", ns, name, err)
		}
		if resp.UsageTime != nil {
			ex.UsageTime = &metav1.Time{Time: *resp.UsageTime}
		} else {
			ex.UsageError = "the scheduler has no usage from load-watcher"
		}
		if now := resp.Explanation; now.OtherScheduler {
			ex.NotBallast = fmt.Sprintf("its schedulerName, %s, is none of Ballast's scheduler profiles: that scheduler places it, by its own rules",
				schedulerNameOf(pod))
		} else {
			ex.Now = now
		}
	}
	if wl, ok := balance.WorkloadOf(pod); ok {
		ex.Workload = wl.String()
		ex.Moves = explainMoves(in.moves, func(m balance.Move) bool { return m.Workload == wl })
	}
	if in.movesErr != nil {
		ex.MovesError = in.movesErr.Error()
	}
	return ex, nil
}

func schedulerNameOf(pod *corev1.Pod) string {
	if pod.Spec.SchedulerName == "" {
		return corev1.DefaultSchedulerName
	}
	return pod.Spec.SchedulerName
}

// Print writes the explanation as text and tables.
func (p PodExplanation) Print(w io.Writer, now time.Time) error {
	fmt.Fprintf(w, "Pod %s/%s (schedulerName %s), %s", p.Namespace, p.Name, p.SchedulerName, p.Phase)
	if p.Node != "" {
		fmt.Fprintf(w, " on %s", p.Node)
	}
	fmt.Fprintln(w)
	switch {
	case p.NotBallast != "":
		fmt.Fprintf(w, "Not Ballast's to place: %s.\n", p.NotBallast)
	case p.Now != nil:
		if p.UsageError != "" {
			fmt.Fprintf(w, "No usage (%s): the scheduler places by requests alone.\n", p.UsageError)
		} else if p.UsageTime != nil {
			fmt.Fprintf(w, "The scheduler's usage from load-watcher is %s old.\n", now.Sub(p.UsageTime.Time).Round(time.Second))
		}
		printNow(w, p)
	}
	if len(p.Moves) > 0 {
		fmt.Fprintf(w, "\nMoves of its workload (%s) by the descheduler:\n", p.Workload)
		printMoves(w, p.Moves, now)
	}
	if p.MovesError != "" {
		fmt.Fprintf(w, "\nThe descheduler's moves could not be read: %s\n", p.MovesError)
	}
	if len(p.Events) > 0 {
		fmt.Fprintln(w, "\nEvents:")
		return printEvents(w, p.Events, now)
	}
	return nil
}

// printEvents writes events as a table, oldest first.
func printEvents(w io.Writer, events []Event, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  AGE\tTYPE\tREASON\tFROM\tMESSAGE")
	for _, e := range events {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", now.Sub(e.Time).Round(time.Second), e.Type, e.Reason, e.From, e.Message)
	}
	return tw.Flush()
}

// printNow writes where the scheduler would place the pod now, node by node.
func printNow(w io.Writer, p PodExplanation) {
	ex := p.Now
	switch {
	case ex.PreFilter != nil:
		fmt.Fprintf(w, "Now: no node can take it: %s: %s\n", ex.PreFilter.Plugin, strings.Join(ex.PreFilter.Reasons, "; "))
	case len(ex.Best) == 0:
		fmt.Fprintln(w, "Now: no node can take it (see why, node by node, below).")
	case p.Node != "" && slices.Contains(ex.Best, p.Node):
		fmt.Fprintf(w, "Now: it would go where it is, %s (best score).\n", p.Node)
	default:
		fmt.Fprintf(w, "Now: it would go to %s (best score).\n", strings.Join(ex.Best, " or "))
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tFITS\tSCORE\tLOADAWARE (measured + pending + pod = predicted / threshold)\tWHY NOT / SCORES")
	for _, n := range ex.Nodes {
		fits, score := "no", "-"
		why := ""
		if n.Feasible {
			fits, score = "yes", fmt.Sprint(n.Total)
			why = scores(n.Scores)
		} else if n.Rejected != nil {
			why = n.Rejected.Plugin + ": " + strings.Join(n.Rejected.Reasons, "; ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", n.Name, fits, score, loadFigures(n.Load), why)
	}
	_ = tw.Flush()
}

// loadFigures formats LoadAware's view of a node.
func loadFigures(r *explanation.NodeReport) string {
	switch {
	case r == nil:
		return "-"
	case r.Unavailable != "":
		return "no usage to go by (" + r.Unavailable + "): placed by requests"
	}
	parts := make([]string, 0, len(r.Resources))
	for _, f := range r.Resources {
		s := fmt.Sprintf("%s %.1f+%.1f+%.1f=%.1f%%", f.Resource, f.Current, f.Pending, f.Pod, f.Predicted)
		if f.Threshold > 0 {
			s += fmt.Sprintf(" / %g%%", f.Threshold)
			if f.Over {
				s += " (over)"
			}
		}
		parts = append(parts, s)
	}
	if r.Exempt {
		parts = append(parts, "(thresholds do not apply to this pod)")
	}
	return strings.Join(parts, ", ")
}

// scores formats the weighted scores of the plugins that scored a node,
// highest first.
func scores(ps []explanation.PluginScore) string {
	ps = append([]explanation.PluginScore(nil), ps...)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Score > ps[j].Score })
	parts := make([]string, 0, len(ps))
	for _, s := range ps {
		if s.Score != 0 {
			parts = append(parts, fmt.Sprintf("%s %d", s.Plugin, s.Score))
		}
	}
	return strings.Join(parts, ", ")
}

// sortEvents orders events oldest first.
func sortEvents(events []Event) {
	sort.SliceStable(events, func(i, j int) bool { return events[i].Time.Before(events[j].Time) })
}

// printMoves writes moves, one paragraph each.
func printMoves(w io.Writer, moves []MoveExplanation, now time.Time) {
	for _, m := range moves {
		landed := "its replacement has not run yet"
		switch {
		case m.LandedOn == m.Destination:
			landed = "its replacement ran there, as planned"
		case m.LandedOn != "":
			landed = "its replacement ran on " + m.LandedOn + ", not as planned"
		}
		fmt.Fprintf(w, "  %s ago: off %s, expected on %s; %s", now.Sub(m.At).Round(time.Second), m.Source, m.Destination, landed)
		if m.Bounced {
			fmt.Fprintf(w, "; a new pod of the workload ran on %s again (a bounce)", m.Source)
		}
		fmt.Fprintln(w)
		if m.Why != "" {
			fmt.Fprintf(w, "    %s\n", m.Why)
		}
		if m.Cooled != "" {
			fmt.Fprintf(w, "    afterwards %s came down %s\n", m.Source, m.Cooled)
		}
	}
}
