// Package config_test checks that every scheduler configuration shipped in
// this directory loads through kube-scheduler's own decoding, defaulting
// and validation, and that Ballast's plugins accept their args.
package config_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// offline is a kubeconfig for a server that is never contacted: building
// the scheduler does not talk to the API server.
const offline = `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: unused}}]
current-context: c
`

func noUsage(context.Context, fwk.Handle) (nodeload.Source, error) { return nil, nil }

// setup builds a real scheduler (all profiles, all plugins) from a config
// file, pointing it at an offline kubeconfig.
func setup(t *testing.T, configYAML []byte) error {
	t.Helper()
	var cfg map[string]any
	if err := yaml.Unmarshal(configYAML, &cfg); err != nil {
		t.Fatalf("parsing: %v", err)
	}
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(offline), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := options.NewOptions()
	opts.ConfigFile = path
	opts.SecureServing.BindPort = 0
	_, tctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(tctx)
	defer cancel()
	_, _, err = schedapp.Setup(ctx, opts, func(r frameworkruntime.Registry) error {
		return r.Merge(plugins.NewRegistry(noUsage, plugins.Options{}))
	})
	return err
}

// shippedFiles lists the scheduler configurations of this directory.
func shippedFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) < 4 {
		t.Fatalf("found %v (%v), want the shipped profiles", files, err)
	}
	return files
}

func TestShippedConfigs(t *testing.T) {
	for _, file := range shippedFiles(t) {
		t.Run(file, func(t *testing.T) {
			cfg, err := options.LoadConfigFromFile(ktesting.NewLogger(t, ktesting.DefaultConfig), file)
			if err != nil {
				t.Fatalf("decoding: %v", err)
			}
			if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
				t.Fatalf("validation: %v", err)
			}
			for _, p := range cfg.Profiles {
				if !strings.Contains(p.SchedulerName, "scheduler") {
					t.Errorf("profile name %q does not name a scheduler", p.SchedulerName)
				}
			}
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := setup(t, data); err != nil {
				t.Fatalf("building the scheduler: %v", err)
			}
		})
	}
}

func TestInvalidArgsStopTheSchedulerNamingTheField(t *testing.T) {
	tests := []struct {
		name  string
		args  string
		field string
	}{
		{name: "unknown strategy", args: "{scoringStrategy: {type: MostLoaded}}", field: "scoringStrategy.type"},
		{name: "threshold above 100", args: "{thresholds: {memory: 120}}", field: "thresholds[memory]"},
		{name: "negative weight", args: "{scoringStrategy: {resources: [{name: cpu, weight: -1}]}}", field: "scoringStrategy.resources[0].weight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := setup(t, []byte(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-scheduler
  plugins: {multiPoint: {enabled: [{name: LoadAware}]}}
  pluginConfig:
  - name: LoadAware
    args: `+tt.args+"\n"))
			if err == nil || !strings.Contains(err.Error(), tt.field) {
				t.Fatalf("err = %v, want an error naming %s", err, tt.field)
			}
		})
	}
}
