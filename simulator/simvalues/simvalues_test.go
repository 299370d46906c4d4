package simvalues

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	deschedulerplugins "github.com/ballast-sched/ballast/descheduler/pkg/plugins"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/validation"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
	ballastconfig "github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
)

func render(t *testing.T, valuesYAML string) *Config {
	t.Helper()
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(valuesYAML), &vals); err != nil {
		t.Fatalf("parsing values: %v", err)
	}
	cfg, err := Render(context.Background(), vals)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return cfg
}

// load decodes, defaults and validates a scheduler configuration the way
// kube-scheduler loads its --config file.
func load(t *testing.T, configYAML string) *schedconfig.KubeSchedulerConfiguration {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(configYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(ktesting.NewLogger(t, ktesting.DefaultConfig), path)
	if err != nil {
		t.Fatalf("kube-scheduler does not decode the configuration: %v\n%s", err, configYAML)
	}
	if err := validation.ValidateKubeSchedulerConfiguration(cfg); err != nil {
		t.Fatalf("kube-scheduler refuses the configuration: %v\n%s", err, configYAML)
	}
	return cfg
}

func profileNames(cfg *schedconfig.KubeSchedulerConfiguration) []string {
	var names []string
	for _, p := range cfg.Profiles {
		names = append(names, p.SchedulerName)
	}
	return names
}

func TestThresholdReachesTheSchedulerProfile(t *testing.T) {
	cfg := load(t, render(t, "scheduler: {plugins: {loadAware: {thresholds: {memory: 60}}}}\n"+
		"descheduler: {loadAwareBalance: {highThresholds: {memory: 60}, lowThresholds: {memory: 40}}, spreadReplicas: {highThresholds: {memory: 60}}}").SchedulerConfig)
	if diff := cmp.Diff([]string{"default-scheduler"}, profileNames(cfg)); diff != "" {
		t.Fatalf("profiles (-want,+got):\n%s", diff)
	}
	var args *ballastconfig.LoadAwareArgs
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == "LoadAware" {
			args, _ = pc.Args.(*ballastconfig.LoadAwareArgs)
		}
	}
	if args == nil {
		t.Fatalf("the default-scheduler profile has no typed LoadAware args: %+v", cfg.Profiles[0].PluginConfig)
	}
	if err := ballastconfig.ValidateLoadAwareArgs(field.NewPath("args"), args); err != nil {
		t.Fatalf("LoadAware refuses its args: %v", err)
	}
	// memory from the values, cpu from the chart's defaults.
	want := map[usage.Resource]float64{usage.Memory: 60, usage.CPU: 85}
	if diff := cmp.Diff(want, args.Thresholds); diff != "" {
		t.Errorf("LoadAware thresholds (-want,+got):\n%s", diff)
	}
}

func TestRenderAdaptsTheStackToTheSimulator(t *testing.T) {
	defaultWindows := []usage.Window{usage.Window1m, usage.Window5m, usage.Window15m}
	for _, tc := range []struct {
		name     string
		values   string
		profiles []string
		// upstream: kube-scheduler's default profile, no Ballast plugin.
		upstream  bool
		policyHas string // "" means a policy that evicts nothing
		interval  time.Duration
		windows   []usage.Window
		period    time.Duration // zero: the chart's default, 15s
	}{
		{name: "chart defaults", profiles: []string{"default-scheduler"}, policyHas: "LoadAwareBalance",
			interval: 5 * time.Minute, windows: defaultWindows},
		{name: "replaceDefault keeps both profiles", values: "global: {schedulerMode: replaceDefault}",
			profiles: []string{"ballast-scheduler", "default-scheduler"}, policyHas: "LoadAwareBalance", interval: 5 * time.Minute, windows: defaultWindows},
		{name: "extra profiles stay", values: "{scheduler: {extraProfiles: [{schedulerName: batch}]}, descheduler: {schedulerNames: [ballast-scheduler, batch]}}",
			profiles: []string{"default-scheduler", "batch"}, policyHas: "LoadAwareBalance", interval: 5 * time.Minute, windows: defaultWindows},
		{name: "no Ballast scheduler", values: "scheduler: {enabled: false}", upstream: true,
			policyHas: "LoadAwareBalance", interval: 5 * time.Minute, windows: defaultWindows},
		{name: "descheduler off", values: "descheduler: {enabled: false}", profiles: []string{"default-scheduler"}, windows: defaultWindows},
		{name: "descheduler dry run", values: "descheduler: {dryRun: true, deschedulingInterval: 90s}",
			profiles: []string{"default-scheduler"}, interval: 90 * time.Second, windows: defaultWindows},
		{name: "only SpreadReplicas", values: "descheduler: {loadAwareBalance: {enabled: false}}",
			profiles: []string{"default-scheduler"}, policyHas: "SpreadReplicas", interval: 5 * time.Minute, windows: defaultWindows},
		{name: "other windows", values: `load-watcher: {windows: ["5m", "15m", "30m"]}`,
			profiles: []string{"default-scheduler"}, policyHas: "LoadAwareBalance", interval: 5 * time.Minute,
			windows: []usage.Window{usage.Window5m, usage.Window15m, usage.Window(30 * time.Minute)}},
		{name: "extra args win", values: `load-watcher: {extraArgs: ["--windows=5m,15m"]}`,
			profiles: []string{"default-scheduler"}, policyHas: "LoadAwareBalance", interval: 5 * time.Minute,
			windows: []usage.Window{usage.Window5m, usage.Window15m}},
		{name: "faster sampling", values: `load-watcher: {period: 10s}`,
			profiles: []string{"default-scheduler"}, policyHas: "LoadAwareBalance", interval: 5 * time.Minute,
			windows: defaultWindows, period: 10 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := render(t, tc.values)
			if tc.upstream {
				if cfg.SchedulerConfig != cluster.DefaultSchedulerConfig {
					t.Errorf("scheduler configuration = %s, want kube-scheduler's default", cfg.SchedulerConfig)
				}
			} else if diff := cmp.Diff(tc.profiles, profileNames(load(t, cfg.SchedulerConfig))); diff != "" {
				t.Errorf("profiles (-want,+got):\n%s", diff)
			}
			if tc.policyHas == "" {
				if cfg.DeschedulerPolicy != noEvictions {
					t.Errorf("descheduler policy = %s, want one that evicts nothing", cfg.DeschedulerPolicy)
				}
			} else if !strings.Contains(cfg.DeschedulerPolicy, "- "+tc.policyHas) {
				t.Errorf("descheduler policy does not enable %s:\n%s", tc.policyHas, cfg.DeschedulerPolicy)
			}
			if cfg.DeschedulingInterval != tc.interval {
				t.Errorf("descheduling interval = %s, want %s", cfg.DeschedulingInterval, tc.interval)
			}
			if diff := cmp.Diff(tc.windows, cfg.Windows); diff != "" {
				t.Errorf("windows (-want,+got):\n%s", diff)
			}
			want := tc.period
			if want == 0 {
				want = 15 * time.Second
			}
			if cfg.Period != want {
				t.Errorf("load-watcher period = %s, want %s", cfg.Period, want)
			}
		})
	}
}

// loadPolicy decodes, validates and defaults a descheduler policy the way
// ballast-descheduler loads its --policy-config-file, strictly.
func loadPolicy(t *testing.T, policyYAML string) *api.DeschedulerPolicy {
	t.Helper()
	path := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	descheduler.SetupPlugins()
	// Loading builds no plugin, so they need no usage source.
	deschedulerplugins.Register(pluginregistry.PluginRegistry, nil)
	policy, err := descheduler.LoadPolicyConfig(path, fake.NewClientset(), pluginregistry.PluginRegistry)
	if err != nil {
		t.Fatalf("the descheduler refuses the policy: %v\n%s", err, policyYAML)
	}
	return policy
}

// The scope the chart renders reaches both Ballast plugins and the
// DefaultEvictor as typed args the descheduler accepts.
func TestDeschedulerScopeReachesThePlugins(t *testing.T) {
	policy := loadPolicy(t, render(t, `
global: {schedulerMode: replaceDefault}
descheduler:
  namespaces: {exclude: [batch]}
  labelSelector: {matchExpressions: [{key: tier, operator: In, values: [web]}]}`).DeschedulerPolicy)
	wantNames := []string{"ballast-scheduler", "default-scheduler"}
	wantNamespaces := &api.Namespaces{Exclude: []string{"kube-system", "ballast-system", "batch"}}
	var plugins []string
	for _, pc := range policy.Profiles[0].PluginConfigs {
		var names []string
		var namespaces *api.Namespaces
		switch a := pc.Args.(type) {
		case *loadawarebalance.LoadAwareBalanceArgs:
			names, namespaces = a.SchedulerNames, a.Namespaces
		case *spreadreplicas.SpreadReplicasArgs:
			names, namespaces = a.SchedulerNames, a.Namespaces
		case *defaultevictor.DefaultEvictorArgs:
			if a.LabelSelector == nil || len(a.LabelSelector.MatchExpressions) != 1 || a.LabelSelector.MatchExpressions[0].Key != "tier" {
				t.Errorf("DefaultEvictor labelSelector = %+v, want tier In (web)", a.LabelSelector)
			}
			continue
		default:
			continue
		}
		plugins = append(plugins, pc.Name)
		if diff := cmp.Diff(wantNames, names); diff != "" {
			t.Errorf("%s schedulerNames (-want,+got):\n%s", pc.Name, diff)
		}
		if diff := cmp.Diff(wantNamespaces, namespaces); diff != "" {
			t.Errorf("%s namespaces (-want,+got):\n%s", pc.Name, diff)
		}
	}
	if diff := cmp.Diff([]string{loadawarebalance.PluginName, spreadreplicas.PluginName}, plugins); diff != "" {
		t.Errorf("Ballast plugins in the policy (-want,+got):\n%s", diff)
	}
}

func TestRefusedValuesGiveTheChartsError(t *testing.T) {
	for _, tc := range []struct {
		name, values, want string
	}{
		{name: "schema", values: "scheduler: {plugins: {loadAware: {thresholds: {memory: 120}}}}", want: "/scheduler/plugins/loadAware/thresholds/memory"},
		{name: "unknown key", values: "scheduler: {plugins: {loadAware: {treshold: 60}}}", want: "treshold"},
		{name: "template check", values: "scheduler: {replicas: 2, leaderElection: {enabled: false}}",
			want: "scheduler.replicas > 1 requires scheduler.leaderElection.enabled=true"},
		{name: "window load-watcher does not keep", values: "scheduler: {plugins: {loadAware: {window: 2m}}}",
			want: "scheduler.plugins.loadAware.window=2m is not one of the windows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vals := map[string]any{}
			if err := yaml.Unmarshal([]byte(tc.values), &vals); err != nil {
				t.Fatal(err)
			}
			cfg, err := Render(context.Background(), vals)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v (config %v), want the chart's error mentioning %q", err, cfg, tc.want)
			}
		})
	}
}
