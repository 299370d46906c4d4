package options

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestEnvFillsFlagsNotGiven(t *testing.T) {
	o := Default()
	fs := NewFlagSet(o)
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
	if err := ApplyEnv(fs, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if o.Period != 30*time.Second || o.Provider != "prometheus" || o.Prometheus.Address != "http://prom:9090" || !o.Prometheus.InsecureSkipVerify {
		t.Errorf("options = %+v", o)
	}
	if diff := cmp.Diff([]string{"2m", "10m"}, o.Windows); diff != "" {
		t.Errorf("windows (-want,+got):\n%s", diff)
	}
	if err := ApplyEnv(fs, func(k string) (string, bool) { return "soon", k == "LOAD_WATCHER_STALE_AFTER" }); err == nil || !strings.Contains(err.Error(), "LOAD_WATCHER_STALE_AFTER") {
		t.Errorf("bad env value: err = %v, want one naming the variable", err)
	}
}
