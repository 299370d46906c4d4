package stack

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/core/defaultstest"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// TestShippedPolicyStatesOnlyWhatDiffersFromDefaults holds the shipped
// descheduler policy to its plugins' defaults, as scheduler/config's test
// holds the scheduler profiles: for every key of every plugin's args, the
// policy is decoded again without it, through the descheduler's own
// decoding with Ballast's plugins registered, and the key is reported when
// the plugin's defaulted args stay the same.
func TestShippedPolicyStatesOnlyWhatDiffersFromDefaults(t *testing.T) {
	for _, key := range redundantPolicyArgs(t, []byte(DeschedulerPolicy)) {
		t.Errorf("%s restates the default; delete it (defaults: docs/descheduler.md)", key)
	}
}

// TestRedundantPolicyArgsFindsRestatedDefaults checks the check on a policy
// that restates LoadAwareBalance's high thresholds and window and chooses
// its low thresholds.
func TestRedundantPolicyArgsFindsRestatedDefaults(t *testing.T) {
	got := redundantPolicyArgs(t, []byte(`apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: p
  pluginConfig:
  - name: LoadAwareBalance
    args:
      highThresholds: {cpu: 80, memory: 85}
      lowThresholds: {cpu: 40, memory: 60}
      window: 5m
  plugins:
    balance:
      enabled: [LoadAwareBalance]
`))
	want := []string{"profiles[p].pluginConfig[LoadAwareBalance].args.highThresholds", "profiles[p].pluginConfig[LoadAwareBalance].args.window"}
	if !slices.Equal(got, want) {
		t.Errorf("redundant keys = %q, want %q", got, want)
	}
}

// redundantPolicyArgs returns the keys of plugin args in a descheduler
// policy whose deletion leaves the plugin's defaulted args equal.
func redundantPolicyArgs(t *testing.T, data []byte) []string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parsing: %v", err)
	}
	path := filepath.Join(t.TempDir(), "policy.yaml")
	decode := func() map[string]runtime.Object {
		data, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cycleMu.Lock()
		defer cycleMu.Unlock()
		policy, err := loadPolicy(path, fake.NewClientset(), balance.Deps{}, nil, "")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]runtime.Object{}
		for _, p := range policy.Profiles {
			for _, pc := range p.PluginConfigs {
				out[p.Name+"/"+pc.Name] = pc.Args
			}
		}
		return out
	}
	full := decode()
	return defaultstest.RedundantPluginArgs(doc, "name", func(id string) bool {
		return equality.Semantic.DeepEqual(decode()[id], full[id])
	})
}
