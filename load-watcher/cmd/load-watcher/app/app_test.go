package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/load-watcher/pkg/version"
)

func TestEnvFillsFlagsNotGiven(t *testing.T) {
	o := defaultOptions()
	fs := newFlagSet(o)
	if err := fs.Parse([]string{"--period=30s"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"LOAD_WATCHER_PERIOD":                          "1m", // the flag wins
		"LOAD_WATCHER_PROVIDER":                        "prometheus",
		"LOAD_WATCHER_PROMETHEUS_ADDRESS":              "http://prom:9090",
		"LOAD_WATCHER_WINDOWS":                         "2m,10m",
		"LOAD_WATCHER_PROMETHEUS_INSECURE_SKIP_VERIFY": "true",
	}
	if err := applyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if o.period != 30*time.Second || o.provider != "prometheus" || o.prometheus.Address != "http://prom:9090" || !o.prometheus.InsecureSkipVerify {
		t.Errorf("options = %+v", o)
	}
	if diff := cmp.Diff([]string{"2m", "10m"}, o.windows); diff != "" {
		t.Errorf("windows (-want,+got):\n%s", diff)
	}
	if err := applyEnv(fs, func(k string) (string, bool) { return "soon", k == "LOAD_WATCHER_STALE_AFTER" }); err == nil || !strings.Contains(err.Error(), "LOAD_WATCHER_STALE_AFTER") {
		t.Errorf("bad env value: err = %v, want one naming the variable", err)
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{name: "unknown provider", args: []string{"--provider=signalfx"}, want: "provider: Unsupported value"},
		{name: "prometheus without address", args: []string{"--provider=prometheus"}, want: "prometheus.address: Required"},
		{name: "bad query set", args: []string{"--provider=prometheus", "--prometheus-address=http://p:9090", "--prometheus-query-set=x"}, want: "querySet"},
		{name: "static usage with another provider", args: []string{"--static-usage=a=1:2"}, want: "staticUsage"},
		{name: "bad window", args: []string{"--windows=1m,later"}, want: "windows[1]"},
		{name: "window shorter than period", args: []string{"--provider=static", "--windows=10s"}, want: "windows[0]"},
		{name: "bad static entry", args: []string{"--provider=static", "--static-usage=a=x:1"}, want: "staticUsage[0]"},
		{name: "unknown flag", args: []string{"--frobnicate"}, want: "unknown flag"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.args, io.Discard, io.Discard, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run(%q) = %v, want an error containing %q", tt.args, err, tt.want)
			}
		})
	}
}

// --version prints and returns without serving, before any other flag is
// checked: the listen address below is taken by nobody and never opened.
func TestRunVersion(t *testing.T) {
	var out strings.Builder
	if err := Run(context.Background(), []string{"--version", "--listen-address=:-1"}, &out, io.Discard, nil); err != nil {
		t.Fatalf("Run(--version) = %v", err)
	}
	// A test binary is linked without -X: the version is the default.
	if got, want := out.String(), version.Line("load-watcher")+"\n"; got != want || !strings.HasPrefix(got, "load-watcher dev") {
		t.Errorf("--version printed %q, want %q", got, want)
	}
}

func TestRunServesAndShutsDown(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, []string{
			"--provider=static", "--static-usage=node-a=30:45,node-b=80:20",
			"--listen-address=127.0.0.1:0", "--period=50ms", "--windows=1m",
		}, io.Discard, io.Discard, func(addr string) { addrc <- addr })
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-done:
		t.Fatalf("Run ended early: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("server did not start")
	}

	var body struct {
		Data struct {
			NodeMetricsMap map[string]json.RawMessage
		} `json:"data"`
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/watcher")
		if err == nil && resp.StatusCode == http.StatusOK {
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			break
		}
		if resp != nil {
			resp.Body.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("/watcher never answered 200 (last: %v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(body.Data.NodeMetricsMap) != 2 {
		t.Errorf("NodeMetricsMap has %d nodes, want 2", len(body.Data.NodeMetricsMap))
	}
	for _, path := range []string{"/readyz", "/healthz", "/metrics"} {
		resp, err := http.Get("http://" + addr + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("%s: %v %v", path, resp.StatusCode, err)
		}
		if resp != nil {
			resp.Body.Close()
		}
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
