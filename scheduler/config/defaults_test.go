package config_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/core/defaultstest"
	_ "github.com/ballast-sched/ballast/scheduler/pkg/apis/config" // Ballast's args in kube-scheduler's scheme
)

// TestShippedProfilesStateOnlyWhatDiffersFromDefaults holds the shipped
// profiles to the scheme's defaults, which are the one home of every
// default: a profile that restates one (a threshold of 90, a 5m window)
// would keep the old value after the default changes, and a reader could
// not tell a choice from a copy. For every key of every plugin's args, the
// test deletes the key and decodes the file again through kube-scheduler's
// scheme; if the plugin's defaulted args come out the same, the key only
// restated the default.
func TestShippedProfilesStateOnlyWhatDiffersFromDefaults(t *testing.T) {
	for _, file := range shippedFiles(t) {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range redundantArgs(t, data) {
				t.Errorf("%s restates the default; delete it (defaults: docs/scheduler.md)", key)
			}
		})
	}
}

// TestRedundantArgsFindsRestatedDefaults checks the check: it must name a
// restated default, at the highest key that restates it, and leave alone a
// value that differs or a map that replaces a default map.
func TestRedundantArgsFindsRestatedDefaults(t *testing.T) {
	const profile = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: s
  plugins: {multiPoint: {enabled: [{name: LoadAware}, {name: LoadVariationRiskBalancing}]}}
  pluginConfig:
  - name: LoadAware
    args:
      thresholds: {cpu: 85, memory: 90}
      window: 10m
      scoringStrategy: {type: LeastLoaded, targetUtilization: 60}
  - name: LoadVariationRiskBalancing
    args:
      resources: [{name: memory, weight: 1}]
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]}
`
	got := redundantArgs(t, []byte(profile))
	want := []string{
		"profiles[s].pluginConfig[LoadAware].args.scoringStrategy.type",
		"profiles[s].pluginConfig[LoadAware].args.thresholds",
		"profiles[s].pluginConfig[NodeResourcesFit].args.scoringStrategy.resources",
	}
	if !slices.Equal(got, want) {
		t.Errorf("redundant keys = %q, want %q", got, want)
	}
}

// redundantArgs returns the keys of plugin args in a scheduler
// configuration whose deletion leaves the plugin's defaulted args equal.
func redundantArgs(t *testing.T, data []byte) []string {
	t.Helper()
	var doc map[string]any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parsing: %v", err)
	}
	full := decodeArgs(t, doc)
	return defaultstest.RedundantPluginArgs(doc, "schedulerName", func(id string) bool {
		return equality.Semantic.DeepEqual(decodeArgs(t, doc)[id], full[id])
	})
}

// decodeArgs decodes doc through kube-scheduler's scheme, which defaults
// every plugin's args, and returns them by "schedulerName/plugin".
func decodeArgs(t *testing.T, doc map[string]any) map[string]runtime.Object {
	t.Helper()
	data, err := yaml.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.Decode(schedscheme.Codecs.UniversalDecoder(), data)
	if err != nil {
		t.Fatalf("decoding %s: %v", strings.TrimSpace(string(data)), err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		t.Fatalf("decoded a %T", obj)
	}
	out := map[string]runtime.Object{}
	for _, p := range cfg.Profiles {
		for _, pc := range p.PluginConfig {
			out[p.SchedulerName+"/"+pc.Name] = pc.Args
		}
	}
	return out
}
