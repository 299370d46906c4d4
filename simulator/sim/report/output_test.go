package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/simulator/sim/model"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

func sampleComparison() *record.Comparison {
	run := func(mode model.Mode, hot float64) *record.Result {
		r := &record.Result{Mode: mode, Thresholds: record.Thresholds{CPU: 85, Memory: 90}}
		for range 4 {
			r.Steps = append(r.Steps, record.Step{Nodes: []record.NodeStep{
				{Node: "pi-1", Pods: 3, CPU: hot, Memory: 40},
				{Node: "pi-2<x>", Pods: 1, CPU: 10, Memory: 20},
			}})
		}
		r.Summarize()
		return r
	}
	return &record.Comparison{Scenario: "sample", Seed: 1, Default: run(model.ModeDefault, 90), Ballast: run(model.ModeBallast, 50),
		Configuration: record.Configuration{Source: record.ConfigValues, Inputs: []string{"-f", "my-values.yaml"}}}
}

func TestWriteText(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sampleComparison()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// default: pi-1 65, pi-2 15 → spread 50; ballast: 45 and 15 → 30; ratio 0.60.
	for _, want := range []string{`utilisation spread \(max−min\) +50\.0 +30\.0 +\(0\.60× default\)`, "█████████░ +90%", `hottest node +pi-1 65% +pi-1 45%`,
		`Ballast configuration: the chart with your values \(-f my-values\.yaml\)`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteTextWithPeer(t *testing.T) {
	c := sampleComparison()
	peer := sampleComparison().Ballast
	peer.Mode = model.ModePeer
	peer.Evictions = 7
	c.Peer = peer
	var buf bytes.Buffer
	if err := WriteText(&buf, c); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	// default 50, peer 30, ballast 30: 0.60× default, 1.00× the best (30).
	for _, want := range []string{`SUMMARY +DEFAULT +PEER +BALLAST`, `utilisation spread \(max−min\) +50\.0 +30\.0 +30\.0 +\(0\.60× default, 1\.00× best\)`,
		`evictions +0 +7 +0`, `Upstream load-aware peer \(Trimaran, LowNodeUtilization\), end of run:`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestWriteHTMLIsSelfContained(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteHTML(&buf, sampleComparison()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if n := strings.Count(out, "<polyline"); n != 12 {
		t.Errorf("want 12 lines (2 nodes × 3 charts × 2 runs), got %d", n)
	}
	if strings.Contains(out, "pi-2<x>") {
		t.Errorf("node names are not escaped")
	}
	for _, banned := range []string{"<script", "http://cdn", "https://", "<link"} {
		if strings.Contains(out, banned) {
			t.Errorf("report loads from elsewhere: contains %q", banned)
		}
	}
}
