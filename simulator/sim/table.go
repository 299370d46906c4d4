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
	}{{"Default kube-scheduler", c.Default}, {"Ballast", c.Ballast}} {
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
		fmt.Fprintf(w, "  %s\t%d\t%.0f%%\t%.0f%%\t%s\t%3.0f%%\t%s\t%3.0f%%\n", name, n.Pods,
			n.CPURequests, n.MemoryRequests, bar(n.CPU), n.CPU, bar(n.Memory), n.Memory)
	}
	return w.Flush()
}

func writeSummary(out io.Writer, c *Comparison) error {
	d, b := c.Default, c.Ballast
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SUMMARY\tDEFAULT\tBALLAST\t")
	fmt.Fprintf(w, "  utilisation spread (max−min)\t%.1f\t%.1f\t(%.2f× default)\n", d.Summary.Spread, b.Summary.Spread, c.SpreadRatio())
	fmt.Fprintf(w, "  coefficient of variation\t%.2f\t%.2f\t\n", d.Summary.CV, b.Summary.CV)
	fmt.Fprintf(w, "  hottest node\t%s %.0f%%\t%s %.0f%%\t\n", d.Summary.Hottest, d.Summary.HottestUtilisation, b.Summary.Hottest, b.Summary.HottestUtilisation)
	fmt.Fprintf(w, "  nodes over threshold (cpu %.0f%% / memory %.0f%%)\t%d\t%d\t\n", HotCPU, HotMemory, d.Summary.OverThreshold, b.Summary.OverThreshold)
	fmt.Fprintf(w, "  pods placed on a hogged node\t%d\t%d\t\n", d.PlacedOnHog, b.PlacedOnHog)
	fmt.Fprintf(w, "  evictions\t%d\t%d\t\n", d.Evictions, b.Evictions)
	fmt.Fprintf(w, "  ping-pong\t%d\t%d\t\n", d.PingPong, b.PingPong)
	fmt.Fprintf(w, "  pods pending\t%d\t%d\t\n", d.Summary.Pending, b.Summary.Pending)
	if err := w.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(out, "Utilisation is the mean of a node's CPU and memory use in %, averaged over the last quarter of the run.")
	return err
}
