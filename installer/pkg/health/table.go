package health

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

const barWidth = 10

// NodeRow is one row of the usage table, in percent of allocatable.
type NodeRow struct {
	Node      string
	CPU       float64
	Memory    float64
	HasCPU    bool
	HasMemory bool
	// Sampled is the age of the newest sample; negative when there is none.
	Sampled time.Duration
	// State is empty for usage the scheduler trusts, else what it does
	// instead.
	State string
}

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

// statisticLabel says which number of window w a column shows for r.
func statisticLabel(r usage.Resource, w usage.Window) string {
	switch loadmodel.DefaultStatistics()[r] {
	case loadmodel.Latest:
		return "newest sample"
	case loadmodel.P95:
		return w.String() + " p95"
	}
	return w.String() + " average"
}

// PrintNodes writes the per-node usage table: per resource, the statistic
// LoadAware compares with its thresholds by default.
func PrintNodes(w io.Writer, window usage.Window, rows []NodeRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "NODE\tCPU (%s)\tMEMORY (%s)\tSAMPLED\n", statisticLabel(usage.CPU, window), statisticLabel(usage.Memory, window))
	for _, r := range rows {
		sampled := "never"
		if r.Sampled >= 0 {
			sampled = r.Sampled.String() + " ago"
		}
		if r.State != "" {
			sampled += ", " + r.State
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Node, cell(r.HasCPU, r.CPU), cell(r.HasMemory, r.Memory), sampled)
	}
	return tw.Flush()
}
