package health

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

var update = flag.Bool("update", false, "rewrite golden files")

// report is a cluster of three nodes whose scheduler is not ready: pi-2 is
// fresh, pi-1 stale, pi-3 without usage.
func report() Report {
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	stats := func(avg, latest float64) usage.Stats {
		return usage.Stats{Avg: avg, Max: max(avg, latest), P95: max(avg, latest), Latest: latest, Samples: 20}
	}
	snap := &usage.Snapshot{Time: at, Source: "metrics-server", Nodes: map[string]usage.NodeUsage{
		"pi-2": {Node: "pi-2", SampleTime: at.Add(-12 * time.Second), Windows: map[usage.Window]map[usage.Resource]usage.Stats{
			// The table reads the 5m window, LoadAware's default.
			usage.Window1m: {usage.CPU: stats(99, 99), usage.Memory: stats(99, 99)},
			usage.Window5m: {usage.CPU: stats(71.5, 20), usage.Memory: stats(30, 40)},
		}},
		"pi-1": {Node: "pi-1", SampleTime: at.Add(-3 * time.Minute), Stale: true, Windows: map[usage.Window]map[usage.Resource]usage.Stats{
			usage.Window5m: {usage.CPU: stats(12, 50)},
		}},
	}}
	return Report{
		Namespace: "ballast-system",
		Components: []Component{
			{Name: "load-watcher", Found: true, Ready: true, Replicas: 1, Available: 1},
			{Name: "scheduler", Found: true, Ready: false, Replicas: 2, Available: 1},
			{Name: "descheduler"},
		},
		Usage:       newUsage(snap, []string{"pi-1", "pi-2", "pi-3"}),
		UsageVia:    "port-forward to pod ballast-load-watcher-7d9f8-x2x7q",
		LoadWatcher: LoadWatcher{Port: 2020, StaleAfter: 90 * time.Second, From: "release ballast-system/ballast revision 3"},
		OptIn:       "off (optIn.enabled is false, or replaceDefault mode, where every pod is Ballast's)",
		Servers:     &k3s.Cluster{Servers: []k3s.Server{{Node: "pi-1", Scheduler: k3s.SchedulerConverted}}, Leader: "pi-1", Local: "pi-1"},
		LocalDropIn: true,
		Growing: []Growing{{Namespace: "apps", Pod: "leaky-0", Note: "+12.0 MiB/min, from 200 MiB to 560 MiB over 30m",
			Seen: at.Add(-10 * time.Minute)}},
		// One kubeconfig ends in three days, one in twenty.
		ReleaseName: "ballast",
		Kubeconfigs: []kubeconfig.Credential{
			{Component: "load-watcher", ServiceAccount: "ballast-load-watcher-external", Secret: "ballast-system/ballast-load-watcher-kubeconfig",
				Server: "https://192.168.1.10:6443", Expires: at.Add(3*24*time.Hour + 2*time.Hour)},
			{Component: "scheduler", ServiceAccount: "ballast-scheduler-external", File: "/etc/ballast/scheduler.kubeconfig", Host: "pi-5",
				Server: "https://192.168.1.10:6443", Expires: at.Add(20 * 24 * time.Hour)},
		},
		Now: at,
	}
}

// A kubeconfig whose token ends within a week is warned of, with the
// command that renews it; one that has ended too; the others are not.
func TestKubeconfigsEndingWithinAWeekAreWarnedOf(t *testing.T) {
	r := report()
	want := []string{"the kubeconfig of load-watcher in Secret ballast-system/ballast-load-watcher-kubeconfig ends in 3d2h " +
		"(2026-11-28T14:00:00Z); renew it with: ballast kubeconfig load-watcher --renew"}
	if diff := cmp.Diff(want, r.Warnings()); diff != "" {
		t.Errorf("warnings (-want,+got):\n%s", diff)
	}
	r.Now = r.Now.Add(25 * 24 * time.Hour)
	r.Namespace = "sched"
	got := r.Warnings()
	if len(got) != 2 || !strings.Contains(got[0], "ended 21d22h ago") ||
		!strings.Contains(got[1], "file /etc/ballast/scheduler.kubeconfig on pi-5 ended 5d0h") ||
		!strings.Contains(got[1], "ballast kubeconfig scheduler --renew --ballast-namespace sched (on pi-5)") {
		t.Errorf("25 days later: %q", got)
	}
	if r.Healthy() != report().Healthy() {
		t.Error("an ending kubeconfig changed the health: it is a warning")
	}
	var b strings.Builder
	if err := r.Print(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "token ENDED 21d22h ago") {
		t.Errorf("the table does not show the ended token:\n%s", b.String())
	}
}

// TestStatusDocument pins the structured document scripts read: its field
// names and what it says of a report the table test prints too.
func TestStatusDocument(t *testing.T) {
	got, err := json.MarshalIndent(report().Status(), "", "    ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	golden := filepath.Join("testdata", "status.json")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("document (-want,+got):\n%s", diff)
	}
}

func TestProblemsDecideHealth(t *testing.T) {
	r := report()
	if diff := cmp.Diff([]string{"scheduler is not ready (1/2 available)"}, r.Problems()); diff != "" {
		t.Errorf("problems (-want,+got):\n%s", diff)
	}
	r.Components[1].Ready = true
	if s := r.Status(); !s.Healthy || len(s.Problems) != 0 {
		t.Errorf("every component ready and pi-2 fresh: healthy %t, problems %q", s.Healthy, s.Problems)
	}
	r.Usage, r.UsageErr = nil, errors.New("load-watcher (pod lw-0) is not ready: no sample collected yet")
	s := r.Status()
	if s.Healthy || len(s.Problems) != 1 || !strings.Contains(s.Problems[0], "no sample collected yet") || s.LoadWatcher.Reachable {
		t.Errorf("without usage: %+v", s)
	}
	if s.Nodes == nil || s.GrowingPods == nil {
		t.Error("lists must be empty, not null, in the document")
	}
}

func TestLoadWatcherFromValues(t *testing.T) {
	defaults := chartutil.Values{"global": map[string]any{"loadWatcher": map[string]any{"port": 2020, "tls": map[string]any{"enabled": false}}},
		"scheduler": map[string]any{"loadWatcherStaleAfter": "90s"}}
	// A release's values, as read back from its Secret: JSON numbers.
	release := chartutil.Values{"global": map[string]any{"loadWatcher": map[string]any{"port": float64(3030), "tls": map[string]any{"enabled": true}}},
		"scheduler": map[string]any{"loadWatcherStaleAfter": "2m"}}
	for _, tt := range []struct {
		name string
		vals chartutil.Values
		want LoadWatcher
	}{
		{name: "defaults", vals: defaults, want: LoadWatcher{Port: 2020, StaleAfter: 90 * time.Second, From: "x"}},
		{name: "release", vals: release, want: LoadWatcher{Port: 3030, TLS: true, StaleAfter: 2 * time.Minute, From: "x"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := LoadWatcherFromValues(tt.vals, "x")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if _, err := LoadWatcherFromValues(chartutil.Values{"scheduler": map[string]any{}}, "x"); err == nil {
		t.Error("values without a port: want an error")
	}
}

// TestReadAsksReadyzWhenUsageIsMissing serves what a load-watcher whose
// provider fails serves: 503 on usage and its reason on /readyz.
func TestReadAsksReadyzWhenUsageIsMissing(t *testing.T) {
	reason := "no successful sample yet: metrics-server: listing NodeMetrics: the server could not find the requested resource"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		switch r.URL.Path {
		case apiv1.Path:
			_, _ = w.Write([]byte(`{"code":503,"reason":"NoData","message":"no usage yet"}`))
		case readyzPath:
			_ = json.NewEncoder(w).Encode(map[string]any{"ready": false, "reason": reason, "rounds": 3, "nodesTracked": 0})
		}
	}))
	defer srv.Close()
	u, ready, err := read(context.Background(), srv.URL, srv.Client(), nil, 0, true)
	if u != nil || err == nil {
		t.Fatalf("usage %v, err %v; want an error", u, err)
	}
	if ready == nil || ready.Ready || ready.Reason != reason {
		t.Errorf("readiness = %+v, want not ready with load-watcher's reason", ready)
	}
	if _, ready, _ := read(context.Background(), srv.URL, srv.Client(), nil, 0, false); ready != nil {
		t.Errorf("through the service proxy /readyz is not asked: got %+v", ready)
	}
}
