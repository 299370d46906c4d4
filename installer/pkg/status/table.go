package status

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"text/tabwriter"
)

const barWidth = 10

// bar draws percent (0–100) as a fixed-width bar, e.g. "███▌      ".
func bar(percent float64) string {
	p := math.Max(0, math.Min(100, percent))
	eighths := int(math.Round(p / 100 * barWidth * 8))
	full, rest := eighths/8, eighths%8
	var b strings.Builder
	b.WriteString(strings.Repeat("█", full))
	if rest > 0 {
		b.WriteRune([]rune(" ▏▎▍▌▋▊▉")[rest])
		full++
	}
	b.WriteString(strings.Repeat(" ", barWidth-full))
	return b.String()
}

func cell(has bool, percent float64) string {
	if !has {
		return "-"
	}
	return fmt.Sprintf("%s %5.1f%%", bar(percent), percent)
}

// PrintNodes writes the per-node usage table.
func PrintNodes(w io.Writer, nodes []NodeUsage) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tCPU\tMEMORY")
	for _, n := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Node, cell(n.HasCPU, n.CPU), cell(n.HasMemory, n.Memory))
	}
	return tw.Flush()
}

func sortNodes(nodes []NodeUsage) {
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Node < nodes[j].Node })
}
