package registry

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/prometheus"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

func TestNames(t *testing.T) {
	if diff := cmp.Diff([]string{"metrics-server", "prometheus", "static"}, Names()); diff != "" {
		t.Errorf("Names (-want,+got):\n%s", diff)
	}
}

func TestNew(t *testing.T) {
	s := static.New()
	tests := []struct {
		name     string
		provider string
		opts     Options
		wantName string
		wantErr  string
	}{
		{name: "metrics-server", provider: "metrics-server", opts: Options{RestConfig: &rest.Config{Host: "https://127.0.0.1:6443"}}, wantName: "metrics-server"},
		{name: "metrics-server needs a cluster", provider: "metrics-server", wantErr: "client configuration"},
		{name: "metrics-server with a negative timeout", provider: "metrics-server",
			opts:    Options{RestConfig: &rest.Config{Host: "https://127.0.0.1:6443"}, MetricsServer: metricsserver.Config{Timeout: -time.Second}},
			wantErr: "metricsServer.timeout"},
		{name: "prometheus", provider: "prometheus", opts: Options{Prometheus: prometheus.Config{Address: "http://127.0.0.1:9090"}}, wantName: "prometheus"},
		{name: "prometheus needs an address", provider: "prometheus", wantErr: "prometheus.address"},
		{name: "static", provider: "static", opts: Options{Static: s}, wantName: "static"},
		{name: "unknown name is an error", provider: "signalfx", wantErr: `provider: Unsupported value: "signalfx"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := New(tt.provider, tt.opts)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("New(%q) error = %v, want one containing %q", tt.provider, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("New(%q): %v", tt.provider, err)
			}
			if p.Name() != tt.wantName {
				t.Errorf("Name() = %q, want %q", p.Name(), tt.wantName)
			}
		})
	}
	if p, _ := New("static", Options{Static: s}); p != s {
		t.Errorf("static: want the given provider back")
	}
}
