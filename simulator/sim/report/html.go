package report

import (
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// palette colours node lines; it repeats past its length.
var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"}

const (
	chartWidth, chartHeight = 460.0, 200.0
	chartPad                = 30.0
)

// chart is one SVG line chart: a line per node over the run.
type chart struct {
	Title  string
	Lines  []chartLine
	Width  float64
	Height float64
	Grid   []gridLine
}

type chartLine struct {
	Node   string
	Color  string
	Points string
}

type gridLine struct {
	Y     float64
	Label string
}

// newChart plots value(node step) for every node of r over time, 0–100%.
func newChart(title string, r *record.Result, value func(record.NodeStep) float64) chart {
	ch := chart{Title: title, Width: chartWidth, Height: chartHeight}
	for _, p := range []float64{0, 25, 50, 75, 100} {
		ch.Grid = append(ch.Grid, gridLine{Y: y(p), Label: fmt.Sprintf("%.0f%%", p)})
	}
	points := map[string]*strings.Builder{}
	var order []string
	n := max(len(r.Steps)-1, 1)
	for i, s := range r.Steps {
		x := chartPad + float64(i)/float64(n)*(chartWidth-chartPad-5)
		for _, ns := range s.Nodes {
			b, ok := points[ns.Node]
			if !ok {
				b = &strings.Builder{}
				points[ns.Node] = b
				order = append(order, ns.Node)
			}
			fmt.Fprintf(b, "%.1f,%.1f ", x, y(value(ns)))
		}
	}
	for i, node := range order {
		ch.Lines = append(ch.Lines, chartLine{Node: node, Color: palette[i%len(palette)], Points: points[node].String()})
	}
	return ch
}

func y(percent float64) float64 {
	return 5 + (100-min(max(percent, 0), 100))/100*(chartHeight-25)
}

type reportColumn struct {
	Title   string
	Result  *record.Result
	Charts  []chart
	Spread  string
	Hottest string
}

// WriteHTML writes a self-contained page with each node's CPU and memory
// over time for both stacks side by side. It loads nothing from the network.
func WriteHTML(out io.Writer, c *record.Comparison) error {
	var cols []reportColumn
	for _, col := range []struct {
		title string
		r     *record.Result
	}{{"Default kube-scheduler", c.Default}, {"Ballast", c.Ballast}} {
		cols = append(cols, reportColumn{
			Title:  col.title,
			Result: col.r,
			Charts: []chart{
				newChart("CPU used (% of allocatable)", col.r, func(n record.NodeStep) float64 { return n.CPU }),
				newChart("Memory used (% of allocatable)", col.r, func(n record.NodeStep) float64 { return n.Memory }),
				newChart("Pods", col.r, func(n record.NodeStep) float64 { return float64(n.Pods) * 100 / float64(maxPods(c)) }),
			},
			Spread:  fmt.Sprintf("%.1f", col.r.Summary.Spread),
			Hottest: fmt.Sprintf("%s %.0f%%", col.r.Summary.Hottest, col.r.Summary.HottestUtilisation),
		})
	}
	var best string
	if o := c.Oracle; o != nil {
		best = fmt.Sprintf("Best placement possible (the oracle: every pod's usage known in advance, %s to %s): spread %.1f%s.",
			o.From, o.To, o.Spread, oracleBound(o))
	}
	return reportTemplate.Execute(out, struct {
		C       *record.Comparison
		Cols    []reportColumn
		Ratio   string
		MaxPods int
		Best    string
		Growing string
	}{c, cols, fmt.Sprintf("%.2f", c.SpreadRatio()), maxPods(c), best, growingLine(c.Ballast)})
}

// maxPods is the most pods any node held in either run, the top of the pod
// charts.
func maxPods(c *record.Comparison) int {
	top := 1
	for _, r := range []*record.Result{c.Default, c.Ballast} {
		for _, s := range r.Steps {
			for _, n := range s.Nodes {
				top = max(top, n.Pods)
			}
		}
	}
	return top
}

var reportTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"asPlanned": AsPlanned}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ballast sim: {{.C.Scenario}}</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:2em}
table{border-collapse:collapse;margin:1em 0}td,th{padding:.2em .8em;text-align:right}th:first-child,td:first-child{text-align:left}
svg{background:#fafafa;border:1px solid #ddd;display:block;margin-bottom:.3em}
.legend span{margin-right:1em;font-size:.9em}
</style></head><body>
<h1>ballast sim: {{.C.Scenario}}</h1>
<p>{{.C.Description}} Seed {{.C.Seed}}. Ballast configuration: {{.C.Configuration}}.</p>
<table>
<tr><th></th><th>Default kube-scheduler</th><th>Ballast</th></tr>
<tr><td>utilisation spread (max−min, last quarter)</td><td>{{(index .Cols 0).Spread}}</td><td>{{(index .Cols 1).Spread}} ({{.Ratio}}× default)</td></tr>
<tr><td>hottest node</td><td>{{(index .Cols 0).Hottest}}</td><td>{{(index .Cols 1).Hottest}}</td></tr>
<tr><td>nodes over threshold</td><td>{{.C.Default.Summary.OverThreshold}}</td><td>{{.C.Ballast.Summary.OverThreshold}}</td></tr>
<tr><td>pods placed on a hogged node</td><td>{{.C.Default.PlacedOnHog}}</td><td>{{.C.Ballast.PlacedOnHog}}</td></tr>
<tr><td>evictions</td><td>{{.C.Default.Evictions}}</td><td>{{.C.Ballast.Evictions}}</td></tr>
<tr><td>loops (a move undone, nothing changed)</td><td>{{.C.Default.Loops}}</td><td>{{.C.Ballast.Loops}}</td></tr>
<tr><td>re-moves (a move undone after a change)</td><td>{{.C.Default.ReMoves}}</td><td>{{.C.Ballast.ReMoves}}</td></tr>
<tr><td>moves landed as planned</td><td>{{asPlanned .C.Default}}</td><td>{{asPlanned .C.Ballast}}</td></tr>
<tr><td>pods pending at the end</td><td>{{.C.Default.Summary.Pending}}</td><td>{{.C.Ballast.Summary.Pending}}</td></tr>
<tr><td>of them waiting for their volume's node (down, cordoned or full)</td><td>{{.C.Default.Summary.WaitingForVolume}}</td><td>{{.C.Ballast.Summary.WaitingForVolume}}</td></tr>
</table>
{{if .Best}}<p>{{.Best}}</p>{{end}}
{{if .Growing}}<p>{{.Growing}}</p>{{end}}
<div class="cols">{{range .Cols}}<div><h2>{{.Title}}</h2>
{{range .Charts}}<h3>{{.Title}}</h3>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
{{range .Grid}}<line x1="30" x2="455" y1="{{.Y}}" y2="{{.Y}}" stroke="#ddd"/><text x="2" y="{{.Y}}" font-size="9" dy="3">{{.Label}}</text>
{{end}}{{range .Lines}}<polyline fill="none" stroke="{{.Color}}" stroke-width="1.5" points="{{.Points}}"><title>{{.Node}}</title></polyline>
{{end}}</svg>
<div class="legend">{{range .Lines}}<span style="color:{{.Color}}">■ {{.Node}}</span>{{end}}</div>
{{end}}</div>{{end}}</div>
<p>Pod charts are scaled to {{.MaxPods}} pods. Time runs left to right over the whole scenario.</p>
{{with .C.Ballast.Moves}}<h2>Ballast's moves</h2>
<table><tr><th>at</th><th>pod</th><th>from</th><th>to</th><th>undid an earlier move</th><th>why</th></tr>
{{range .}}<tr><td>{{.At}}</td><td>{{.Pod}}</td><td>{{.From}}</td><td>{{if .To}}{{.To}}{{else}}(not replaced){{end}}</td><td>{{if .Undid}}{{.Undid}}{{else}}no{{end}}</td><td>{{.Reason}}</td></tr>
{{end}}</table>{{end}}
</body></html>
`))
