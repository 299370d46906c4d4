package health

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/usage"
)

func TestBar(t *testing.T) {
	cases := []struct {
		name    string
		percent float64
		want    string
	}{
		{"empty", 0, "          "},
		{"full", 100, "██████████"},
		{"above 100 is clamped", 140, "██████████"},
		{"below 0 is clamped", -5, "          "},
		// 55% of 10 cells = 5.5 cells: five full and a half block.
		{"half cell", 55, "█████▌    "},
		// 12.5% = 1.25 cells: one full and a quarter block.
		{"quarter cell", 12.5, "█▎        "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := bar(tc.percent)
			if got != tc.want {
				t.Errorf("bar(%v) = %q, want %q", tc.percent, got, tc.want)
			}
			if n := len([]rune(got)); n != barWidth {
				t.Errorf("bar(%v) is %d cells wide", tc.percent, n)
			}
		})
	}
}

func TestReportPrint(t *testing.T) {
	r := report()
	snap := r.Usage.Snapshot
	var out bytes.Buffer
	if err := r.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"scheduler     not ready      1/2",
		"descheduler   not installed  -",
		"usage: from metrics-server (load-watcher reached by port-forward to pod ballast-load-watcher-7d9f8-x2x7q)",
		"NODE  CPU (5m average)   MEMORY (newest sample)  SAMPLED",
		// The 5m window, CPU on its mean, memory on its newest sample: 71.5% =
		// 7.15 cells = 57 eighths, seven full and one eighth; 40% four full.
		"pi-2  ███████▏    71.5%  ████        40.0%       12s ago\n",
		// 12% = 9.6 eighths → 10: one full and a quarter.
		"pi-1  █▎          12.0%  -                       3m0s ago, stale: placed by requests\n",
		"pi-3  -                  -                       never, no usage yet: placed by requests\n",
		"  apps/leaky-0  +12.0 MiB/min, from 200 MiB to 560 MiB over 30m  10m ago\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if r.Healthy() {
		t.Error("report with a scheduler not ready counts as healthy")
	}
	r.Components[1].Ready = true
	if !r.Healthy() {
		t.Error("every component ready and pi-2 fresh: want healthy")
	}
	delete(snap.Nodes, "pi-2")
	r.Usage = newUsage(snap, []string{"pi-1"})
	out.Reset()
	if err := r.Print(&out); err != nil {
		t.Fatal(err)
	}
	if r.Healthy() || !strings.Contains(out.String(), "no node has fresh usage") {
		t.Errorf("only stale usage: healthy = %t, output:\n%s", r.Healthy(), out.String())
	}
}

func TestDisplayWindow(t *testing.T) {
	node := func(ws ...usage.Window) usage.NodeUsage {
		n := usage.NodeUsage{Windows: map[usage.Window]map[usage.Resource]usage.Stats{}}
		for _, w := range ws {
			n.Windows[w] = map[usage.Resource]usage.Stats{}
		}
		return n
	}
	for _, tc := range []struct {
		nodes map[string]usage.NodeUsage
		want  usage.Window
	}{
		{map[string]usage.NodeUsage{"a": node(usage.Window1m), "b": node(usage.Window15m, usage.Window5m)}, usage.Window5m},
		{map[string]usage.NodeUsage{"a": node(usage.Window15m), "b": node(usage.Window(2 * time.Minute))}, usage.Window(2 * time.Minute)},
		{map[string]usage.NodeUsage{}, usage.Window5m},
	} {
		if got := displayWindow(&usage.Snapshot{Nodes: tc.nodes}); got != tc.want {
			t.Errorf("displayWindow(%v) = %v, want %v", tc.nodes, got, tc.want)
		}
	}
}
