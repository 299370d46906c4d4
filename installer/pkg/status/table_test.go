package status

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

const watcherDoc = `{
  "timestamp": 1700000000,
  "window": {"duration": "5m", "start": 1699999700, "end": 1700000000},
  "source": "metrics-server",
  "data": {"NodeMetricsMap": {
    "pi-2": {"metrics": [
      {"name": "cpu", "type": "CPU", "operator": "AVG", "value": 71.5},
      {"name": "cpu", "type": "CPU", "operator": "STD", "value": 3},
      {"name": "mem", "type": "Memory", "operator": "AVG", "value": 40}
    ]},
    "pi-1": {"metrics": [
      {"name": "cpu", "type": "CPU", "operator": "AVG", "value": 12}
    ]}
  }}
}`

func TestParseWatcher(t *testing.T) {
	u, err := parseWatcher([]byte(watcherDoc))
	if err != nil {
		t.Fatal(err)
	}
	want := Usage{
		Source: "metrics-server", Window: "5m", Time: time.Unix(1700000000, 0),
		Nodes: []NodeUsage{
			{Node: "pi-1", CPU: 12, HasCPU: true},
			{Node: "pi-2", CPU: 71.5, HasCPU: true, Memory: 40, HasMemory: true},
		},
	}
	if diff := cmp.Diff(want, u); diff != "" {
		t.Errorf("usage (-want,+got):\n%s", diff)
	}
	if _, err := parseWatcher([]byte("<html>")); err == nil {
		t.Error("garbage accepted")
	}
}

func TestReportPrint(t *testing.T) {
	u, err := parseWatcher([]byte(watcherDoc))
	if err != nil {
		t.Fatal(err)
	}
	r := Report{
		Namespace: "ballast-system",
		Components: []Component{
			{Name: "load-watcher", Found: true, Ready: true, Replicas: 1, Available: 1},
			{Name: "scheduler", Found: true, Ready: false, Replicas: 2, Available: 1},
			{Name: "descheduler"},
		},
		Usage: &u,
		Now:   time.Unix(1700000042, 0),
	}
	var out bytes.Buffer
	if err := r.Print(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"scheduler     not ready      1/2",
		"descheduler   not installed  -",
		"usage: from metrics-server, window 5m, 42s old",
		// 71.5% = 7.15 cells = 57 eighths: seven full and one eighth; 12% = 9.6 eighths → 10: one full and a quarter.
		"pi-2  ███████▏    71.5%  ████        40.0%",
		"pi-1  █▎          12.0%  -",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if r.Healthy() {
		t.Error("report with a scheduler not ready counts as healthy")
	}
}
