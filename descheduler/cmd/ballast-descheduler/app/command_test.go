package app

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/descheduler/pkg/check"
	"github.com/ballast-sched/ballast/descheduler/pkg/options"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/nodeutilization"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/removeduplicates"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/core/version"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
)

const policyPath = "../../../config/policy.yaml"

// preRun runs the command's PreRunE with args the way cobra would.
func preRun(t *testing.T, args ...string) error {
	t.Helper()
	cmd := NewCommand(io.Discard)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("parsing %v: %v", args, err)
	}
	return cmd.PreRunE(cmd, nil)
}

func TestPreRunRegistersBallastPluginsAfterUpstreamSetup(t *testing.T) {
	pluginregistry.PluginRegistry = nil
	if err := preRun(t); err != nil {
		t.Fatalf("PreRunE: %v", err)
	}
	for _, name := range []string{
		loadawarebalance.PluginName,
		spreadreplicas.PluginName,
		defaultevictor.PluginName,
		removeduplicates.PluginName,
		nodeutilization.LowNodeUtilizationPluginName,
		"RemovePodsViolatingTopologySpreadConstraint",
		"PodLifeTime",
	} {
		if _, ok := pluginregistry.PluginRegistry[name]; !ok {
			t.Errorf("plugin %s is not registered after PreRunE", name)
		}
	}
}

// The wrap exists because upstream setup replaces the registry: a plugin
// registered before it is lost. If upstream ever stops doing that, this
// test says so.
func TestUpstreamSetupDropsEarlierRegistrations(t *testing.T) {
	pluginregistry.PluginRegistry = pluginregistry.NewRegistry()
	plugins.Register(pluginregistry.PluginRegistry, nil)
	descheduler.SetupPlugins()
	if _, ok := pluginregistry.PluginRegistry[loadawarebalance.PluginName]; ok {
		t.Fatal("upstream SetupPlugins kept an earlier registration; the PreRunE wrap may be unnecessary")
	}
}

func TestPreRunRejectsBadLoadWatcherAddress(t *testing.T) {
	err := preRun(t, "--load-watcher-address=ftp://load-watcher")
	if err == nil || !strings.Contains(err.Error(), "--load-watcher-address") {
		t.Fatalf("PreRunE = %v, want an error naming --load-watcher-address", err)
	}
}

func TestPreRunRejectsCAFileWithHTTP(t *testing.T) {
	err := preRun(t, "--load-watcher-address=http://load-watcher:2020", "--load-watcher-ca-file=/etc/ballast/load-watcher-ca/ca.crt")
	if err == nil || !strings.Contains(err.Error(), "--load-watcher-ca-file") || !strings.Contains(err.Error(), "caFile") {
		t.Fatalf("PreRunE = %v, want an error naming --load-watcher-ca-file", err)
	}
}

func TestPreRunRejectsBadMovesConfigMap(t *testing.T) {
	for _, v := range []string{"moves", "Ballast/moves", "ballast/", "ballast/Moves_1"} {
		err := preRun(t, "--moves-configmap="+v)
		if err == nil || !strings.Contains(err.Error(), "--moves-configmap") {
			t.Errorf("--moves-configmap=%s: PreRunE = %v, want an error naming the flag", v, err)
		}
	}
	if err := preRun(t, "--moves-configmap=ballast-system/ballast-descheduler-moves"); err != nil {
		t.Errorf("a valid --moves-configmap: %v", err)
	}
}

func TestShippedPolicy(t *testing.T) {
	if err := preRun(t); err != nil {
		t.Fatal(err)
	}
	policy, err := descheduler.LoadPolicyConfig(policyPath, fake.NewClientset(), pluginregistry.PluginRegistry)
	if err != nil {
		t.Fatalf("loading %s: %v", policyPath, err)
	}
	if len(policy.Profiles) != 1 {
		t.Fatalf("want one profile, got %d", len(policy.Profiles))
	}
	p := policy.Profiles[0]
	if diff := cmp.Diff([]string{loadawarebalance.PluginName, spreadreplicas.PluginName}, p.Plugins.Balance.Enabled); diff != "" {
		t.Errorf("balance plugins (-want,+got):\n%s", diff)
	}
	args := map[string]any{}
	for _, pc := range p.PluginConfigs {
		args[pc.Name] = pc.Args
	}
	ev, ok := args[defaultevictor.PluginName].(*defaultevictor.DefaultEvictorArgs)
	if !ok {
		t.Fatalf("DefaultEvictor args are %T", args[defaultevictor.PluginName])
	}
	if !ev.NodeFit || ev.NoEvictionPolicy != defaultevictor.MandatoryNoEvictionPolicy {
		t.Errorf("DefaultEvictor nodeFit=%v noEvictionPolicy=%q, want true and Mandatory", ev.NodeFit, ev.NoEvictionPolicy)
	}
	if ev.EvictLocalStoragePods || ev.EvictDaemonSetPods || ev.EvictSystemCriticalPods || ev.EvictFailedBarePods ||
		len(ev.PodProtections.DefaultDisabled) > 0 {
		t.Errorf("a default pod protection is disabled: %+v", ev)
	}
	lb, ok := args[loadawarebalance.PluginName].(*loadawarebalance.LoadAwareBalanceArgs)
	if !ok {
		t.Fatalf("LoadAwareBalance args are %T", args[loadawarebalance.PluginName])
	}
	if *lb.ConsecutiveHotCycles != 1 || lb.EvictionCooldown.Duration.Minutes() != 10 || lb.HighThresholds["memory"] != 85 {
		t.Errorf("LoadAwareBalance args differ from the documented defaults: %+v", lb)
	}
	for _, name := range []string{loadawarebalance.PluginName, spreadreplicas.PluginName} {
		if !excludes(args[name], "kube-system") {
			t.Errorf("%s does not exclude kube-system", name)
		}
		if diff := cmp.Diff([]string{"ballast-scheduler"}, schedulerNames(args[name])); diff != "" {
			t.Errorf("%s schedulerNames (-want,+got):\n%s", name, diff)
		}
	}
	// Per node, each plugin's own maxEvictionsPerNode applies.
	if policy.MaxNoOfPodsToEvictPerNode != nil {
		t.Errorf("maxNoOfPodsToEvictPerNode = %d, want unset", *policy.MaxNoOfPodsToEvictPerNode)
	}
	if got := *policy.MaxNoOfPodsToEvictTotal; got != 5 {
		t.Errorf("maxNoOfPodsToEvictTotal = %d, want 5", got)
	}
}

func excludes(args any, ns string) bool {
	var n *api.Namespaces
	switch a := args.(type) {
	case *loadawarebalance.LoadAwareBalanceArgs:
		n = a.Namespaces
	case *spreadreplicas.SpreadReplicasArgs:
		n = a.Namespaces
	}
	return n != nil && len(n.Include) == 0 && contains(n.Exclude, ns)
}

func schedulerNames(args any) []string {
	switch a := args.(type) {
	case *loadawarebalance.LoadAwareBalanceArgs:
		return a.SchedulerNames
	case *spreadreplicas.SpreadReplicasArgs:
		return a.SchedulerNames
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Invalid plugin args stop the binary before it evicts anything, and the
// error names the field.
func TestStartFailsOnInvalidArgs(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "policy.yaml")
	writeFile(t, policy, `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: ballast
    pluginConfig:
      - name: LoadAwareBalance
        args:
          highThresholds: {cpu: 120, memory: 85}
          consecutiveHotCycles: 0
    plugins:
      balance:
        enabled: [LoadAwareBalance]
`)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeFile(t, kubeconfig, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
users: [{name: u, user: {token: t}}]
current-context: c
`)
	cmd := NewCommand(io.Discard)
	cmd.SetArgs([]string{"--policy-config-file", policy, "--kubeconfig", kubeconfig, "--secure-port=0"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	if err == nil {
		t.Fatal("the command started with invalid LoadAwareBalance args")
	}
	for _, field := range []string{"highThresholds[cpu]", "consecutiveHotCycles"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// The usage source fetches once when the first plugin is built, so even a
// single descheduling run has usage.
func TestUsageSourceFetchesOnStart(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		list := apiv1.UsageList{APIVersion: apiv1.APIVersion, Time: now, Source: "test", PeriodSeconds: 15, StaleAfterSeconds: 45, Windows: []string{"5m"}, Nodes: map[string]apiv1.NodeUsage{
			"n1": {SampleTime: now, Windows: map[string]map[usage.Resource]usage.Stats{
				"5m": {usage.Memory: {Avg: 42, Samples: 3}},
			}},
		}}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(list); err != nil {
			t.Error(err)
		}
	}))
	defer srv.Close()
	o := options.NewOptions()
	o.LoadWatcherAddress, o.LoadWatcherStaleAfter = srv.URL, time.Minute
	c, err := o.UsageClient("")
	if err != nil {
		t.Fatal(err)
	}
	src := &lazyClient{client: c}
	if src.Snapshot() != nil {
		t.Fatal("snapshot before Start")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src.Start(ctx)
	snap := src.Snapshot()
	if _, ok := snap.Node("n1"); !ok {
		t.Fatalf("no fresh usage of n1 right after Start: %+v", snap)
	}
}

// Both forms print Ballast's version and run nothing: upstream's RunE would
// look for a cluster.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out strings.Builder
			cmd := NewCommand(&out)
			cmd.SetArgs(args)
			if err := cmd.Execute(); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			// A test binary is linked without -X: the version is the default.
			if got, want := out.String(), version.Line("ballast-descheduler")+"\n"; got != want || !strings.HasPrefix(got, "ballast-descheduler dev") {
				t.Errorf("%v printed %q, want %q", args, got, want)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite the check's list of the upstream descheduler's flags from the command")

// TestCheckKnowsTheCommandsFlags holds the start-up check's list of the
// flags the command takes beyond Ballast's own to the command: a flag added
// or retyped by a descheduler update fails here until
// `go test ./cmd/ballast-descheduler/app -run TestCheckKnowsTheCommandsFlags -update`
// rewrites the list.
func TestCheckKnowsTheCommandsFlags(t *testing.T) {
	own := pflag.NewFlagSet("own", pflag.ContinueOnError)
	options.NewOptions().AddFlags(own)
	var want []startup.Flag
	for _, f := range startup.FlagsOf(NewCommand(io.Discard).Flags()) {
		if own.Lookup(f.Name) == nil {
			want = append(want, f)
		}
	}
	const file = "../../../pkg/check/upstreamflags.go"
	if *update {
		var b strings.Builder
		b.WriteString("// Code generated by TestCheckKnowsTheCommandsFlags (go test ./cmd/ballast-descheduler/app -update); DO NOT EDIT.\n\n")
		b.WriteString("package check\n\nimport \"github.com/ballast-sched/ballast/core/startup\"\n\n")
		b.WriteString("// UpstreamFlags are the flags of ballast-descheduler's command that are not\n// Ballast's: the descheduler's, logging and the API server options it serves with.\n")
		b.WriteString("var UpstreamFlags = []startup.Flag{\n")
		for _, f := range want {
			fmt.Fprintf(&b, "\t{Name: %q, Shorthand: %q, Type: %q, NoOptDefVal: %q, DefValue: %q},\n", f.Name, f.Shorthand, f.Type, f.NoOptDefVal, f.DefValue)
		}
		b.WriteString("}\n")
		src, err := format.Source([]byte(b.String()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, src, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, check.UpstreamFlags); diff != "" {
		t.Errorf("the check's flags are not the command's (-command,+check); run with -update:\n%s", diff)
	}
}
