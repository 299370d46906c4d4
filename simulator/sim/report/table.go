package report

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ballast-sched/ballast/simulator/sim/oracle"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// barWidth is the number of cells a 100% bar fills.
const barWidth = 10

// bar draws percent as a small horizontal bar, capped at full.
func bar(percent float64) string {
	filled := int(math.Round(min(max(percent, 0), 100) / 100 * barWidth))
	return strings.Repeat("█", filled) + strings.Repeat("░", barWidth-filled)
}

// WriteText prints the comparison for a terminal: each stack's nodes at the
// end of the run, then the summary side by side.
func WriteText(out io.Writer, c *record.Comparison) error {
	fmt.Fprintf(out, "Scenario %s (seed %d)\n", c.Scenario, c.Seed)
	if c.Description != "" {
		fmt.Fprintf(out, "%s\n", c.Description)
	}
	fmt.Fprintf(out, "Ballast configuration: %s\n", c.Configuration)
	for _, r := range []struct {
		title string
		res   *record.Result
	}{{"Default kube-scheduler", c.Default}, {"Upstream load-aware peer (Trimaran, LowNodeUtilization)", c.Peer}, {"Ballast", c.Ballast}} {
		if r.res == nil {
			continue
		}
		fmt.Fprintf(out, "\n%s, end of run:\n", r.title)
		if err := writeNodes(out, r.res.Summary.Final); err != nil {
			return err
		}
	}
	fmt.Fprintln(out)
	if err := writeSummary(out, c); err != nil {
		return err
	}
	if c.Ballast != nil && len(c.Ballast.Moves) > 0 {
		fmt.Fprintln(out, "\nBallast's moves:")
		return WriteMoves(out, c.Ballast.Moves)
	}
	return nil
}

// WriteMoves prints a run's moves: when, which pod, from and to which node,
// whether it undid an earlier move, and why the descheduler made it.
func WriteMoves(out io.Writer, moves []record.Move) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "AT\tPOD\tFROM\tTO\tUNDID AN EARLIER MOVE\tWHY")
	for _, m := range moves {
		to := m.To
		if to == "" {
			to = "(not replaced)"
		}
		undid := m.Undid
		if undid == "" {
			undid = "no"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.At, m.Pod, m.From, to, undid, m.Reason())
	}
	return w.Flush()
}

func writeNodes(out io.Writer, nodes []record.NodeStep) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  NODE\tPODS\tCPU REQ\tMEM REQ\tCPU USED\t\tMEM USED\t")
	for _, n := range nodes {
		name := n.Node
		if n.Cordoned {
			name += " (cordoned)"
		}
		if n.Down {
			name += " (down)"
		}
		if n.NoUsage {
			fmt.Fprintf(w, "  %s\t%d\t%.0f%%\t%.0f%%\tunknown\t\tunknown\t\n", name, n.Pods, n.CPURequests, n.MemoryRequests)
			continue
		}
		fmt.Fprintf(w, "  %s\t%d\t%.0f%%\t%.0f%%\t%s\t%3.0f%%\t%s\t%3.0f%%\n", name, n.Pods,
			n.CPURequests, n.MemoryRequests, bar(n.CPU), n.CPU, bar(n.Memory), n.Memory)
	}
	return w.Flush()
}

// summaryRow is one figure of the summary table.
type summaryRow struct {
	// label names the figure; it may show the thresholds a result judges
	// hot nodes by.
	label func(record.Thresholds) string
	value func(*record.Result) string
	// runOnly figures need a whole run's history, which a live cluster's
	// placement lacks.
	runOnly bool
}

// fixed is a label that does not depend on the thresholds.
func fixed(label string) func(record.Thresholds) string {
	return func(record.Thresholds) string { return label }
}

var summaryRows = []summaryRow{
	{label: fixed("utilisation spread (max−min)"), value: func(r *record.Result) string { return fmt.Sprintf("%.1f", r.Summary.Spread) }},
	{label: fixed("coefficient of variation"), value: func(r *record.Result) string { return fmt.Sprintf("%.2f", r.Summary.CV) }},
	{label: fixed("hottest node"), value: func(r *record.Result) string {
		return fmt.Sprintf("%s %.0f%%", r.Summary.Hottest, r.Summary.HottestUtilisation)
	}},
	{label: func(t record.Thresholds) string {
		return fmt.Sprintf("nodes over threshold (%s)", t)
	}, value: func(r *record.Result) string {
		return fmt.Sprint(r.Summary.OverThreshold)
	}},
	{label: fixed("pods placed on a hogged node"), value: func(r *record.Result) string { return fmt.Sprint(r.PlacedOnHog) }, runOnly: true},
	{label: fixed("evictions"), value: func(r *record.Result) string { return fmt.Sprint(r.Evictions) }, runOnly: true},
	{label: fixed("loops (a move undone, nothing changed)"), value: func(r *record.Result) string { return fmt.Sprint(r.Loops) }, runOnly: true},
	{label: fixed("re-moves (a move undone after a change)"), value: func(r *record.Result) string { return fmt.Sprint(r.ReMoves) }, runOnly: true},
	{label: fixed("moves landed as planned"), value: func(r *record.Result) string { return AsPlanned(r) }, runOnly: true},
	{label: fixed("pods pending"), value: func(r *record.Result) string {
		if r.Summary.WaitingForVolume > 0 {
			return fmt.Sprintf("%d (%d waiting for their volume's node)", r.Summary.Pending, r.Summary.WaitingForVolume)
		}
		return fmt.Sprint(r.Summary.Pending)
	}},
}

func writeSummary(out io.Writer, c *record.Comparison) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	stacks := []*record.Result{c.Default, c.Ballast}
	header := "SUMMARY\tDEFAULT\tBALLAST\t"
	if c.Peer != nil {
		stacks = []*record.Result{c.Default, c.Peer, c.Ballast}
		header = "SUMMARY\tDEFAULT\tPEER\tBALLAST\t"
	}
	fmt.Fprintln(w, header)
	for i, row := range summaryRows {
		fmt.Fprintf(w, "  %s", row.label(c.Ballast.Thresholds))
		for _, r := range stacks {
			fmt.Fprintf(w, "\t%s", row.value(r))
		}
		var ratio string
		switch {
		case i == 0 && c.Peer != nil:
			ratio = fmt.Sprintf("(%.2f× default, %.2f× best)", c.SpreadRatio(), c.BestPeerRatio())
		case i == 0:
			ratio = fmt.Sprintf("(%.2f× default)", c.SpreadRatio())
		}
		fmt.Fprintf(w, "\t%s\n", ratio)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintln(out, "Utilisation is the mean of a node's CPU and memory use in %, averaged over the last quarter of the run."); err != nil {
		return err
	}
	if line := perPointLine(c); line != "" {
		fmt.Fprintln(out, line)
	}
	if o := c.Oracle; o != nil {
		fmt.Fprintf(out, "Best placement possible (the oracle: every pod's usage known in advance, %s to %s): spread %.1f%s.\n",
			o.From, o.To, o.Spread, oracleBound(o))
	}
	if g := growingLine(c.Ballast); g != "" {
		fmt.Fprintln(out, g)
	}
	return nil
}

// growingLine names the workloads whose memory the descheduler found
// growing, which it warned about and did not move; empty when none.
func growingLine(r *record.Result) string {
	if len(r.Growing) == 0 {
		return ""
	}
	parts := make([]string, 0, len(r.Growing))
	for _, w := range slices.Sorted(maps.Keys(r.Growing)) {
		parts = append(parts, fmt.Sprintf("%s %.1f MiB/min", w, r.Growing[w]))
	}
	return "Memory that keeps growing (warned about, not moved: it would fill any node): " + strings.Join(parts, ", ") + "."
}

// oracleBound says how far the oracle's placement may be from the best.
func oracleBound(o *oracle.Result) string {
	if o.Bound == nil {
		return fmt.Sprintf(" (no bound: %s)", o.BoundError)
	}
	return fmt.Sprintf("; no placement spreads less than %.1f", *o.Bound)
}

// WritePlacement prints a live cluster's nodes and the summary figures
// that do not need a whole run's history.
func WritePlacement(out io.Writer, p *record.Placement) error {
	fmt.Fprintf(out, "Nodes now (CPU and memory used: load-watcher's %s mean):\n", p.Window)
	if err := writeNodes(out, p.Summary.Final); err != nil {
		return err
	}
	fmt.Fprintln(out)
	r := &record.Result{Summary: p.Summary, Thresholds: p.Thresholds}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SUMMARY")
	for _, row := range summaryRows {
		if !row.runOnly {
			fmt.Fprintf(w, "  %s\t%s\n", row.label(p.Thresholds), row.value(r))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, "Utilisation is the mean of a node's CPU and memory use in %; nodes without usage are left out.")
	return err
}

// AsPlanned is the moves of r that landed where the descheduler planned
// them, as "as planned/landed (share)"; "–" when no planned move landed.
func AsPlanned(r *record.Result) string {
	share, ok := r.AsPlannedShare()
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", r.AsPlanned, r.Landed, share)
}

// perPointLine says what each stack that moved pods paid in evictions per
// point of utilisation spread it removed against the default scheduler;
// empty when none moved any.
func perPointLine(c *record.Comparison) string {
	var parts []string
	for _, s := range []struct {
		name string
		r    *record.Result
	}{{"peer", c.Peer}, {"Ballast", c.Ballast}} {
		if v, moved := c.EvictionsPerPoint(s.r); moved {
			parts = append(parts, s.name+" "+record.FormatPerPoint(v, moved))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "Evictions per point of spread removed (against the default scheduler): " + strings.Join(parts, ", ") + "."
}
