package sim

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
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
func WriteText(out io.Writer, c *Comparison) error {
	fmt.Fprintf(out, "Scenario %s (seed %d)\n", c.Scenario, c.Seed)
	if c.Description != "" {
		fmt.Fprintf(out, "%s\n", c.Description)
	}
	fmt.Fprintf(out, "Ballast configuration: %s\n", c.Configuration)
	for _, r := range []struct {
		title string
		res   *Result
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
	return writeSummary(out, c)
}

func writeNodes(out io.Writer, nodes []NodeStep) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "  NODE\tPODS\tCPU REQ\tMEM REQ\tCPU USED\t\tMEM USED\t")
	for _, n := range nodes {
		name := n.Node
		if n.Cordoned {
			name += " (cordoned)"
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
	label string
	value func(*Result) string
	// runOnly figures need a whole run's history, which a live cluster's
	// placement lacks.
	runOnly bool
}

var summaryRows = []summaryRow{
	{label: "utilisation spread (max−min)", value: func(r *Result) string { return fmt.Sprintf("%.1f", r.Summary.Spread) }},
	{label: "coefficient of variation", value: func(r *Result) string { return fmt.Sprintf("%.2f", r.Summary.CV) }},
	{label: "hottest node", value: func(r *Result) string {
		return fmt.Sprintf("%s %.0f%%", r.Summary.Hottest, r.Summary.HottestUtilisation)
	}},
	{label: fmt.Sprintf("nodes over threshold (cpu %.0f%% / memory %.0f%%)", HotCPU, HotMemory), value: func(r *Result) string {
		return fmt.Sprint(r.Summary.OverThreshold)
	}},
	{label: "pods placed on a hogged node", value: func(r *Result) string { return fmt.Sprint(r.PlacedOnHog) }, runOnly: true},
	{label: "evictions", value: func(r *Result) string { return fmt.Sprint(r.Evictions) }, runOnly: true},
	{label: "ping-pong", value: func(r *Result) string { return fmt.Sprint(r.PingPong) }, runOnly: true},
	{label: "pods pending", value: func(r *Result) string { return fmt.Sprint(r.Summary.Pending) }},
}

func writeSummary(out io.Writer, c *Comparison) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	stacks := []*Result{c.Default, c.Ballast}
	header := "SUMMARY\tDEFAULT\tBALLAST\t"
	if c.Peer != nil {
		stacks = []*Result{c.Default, c.Peer, c.Ballast}
		header = "SUMMARY\tDEFAULT\tPEER\tBALLAST\t"
	}
	fmt.Fprintln(w, header)
	for i, row := range summaryRows {
		fmt.Fprintf(w, "  %s", row.label)
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
	_, err := fmt.Fprintln(out, "Utilisation is the mean of a node's CPU and memory use in %, averaged over the last quarter of the run.")
	return err
}
