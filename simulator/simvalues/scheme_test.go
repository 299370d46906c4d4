package simvalues

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
)

// pluginArgs returns the args of every plugin in a KubeSchedulerConfiguration
// or DeschedulerPolicy, by plugin name, as JSON.
func pluginArgs(t *testing.T, doc string) map[string]json.RawMessage {
	t.Helper()
	var parsed struct {
		Profiles []struct {
			PluginConfig []struct {
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal([]byte(doc), &parsed); err != nil {
		t.Fatalf("parsing %q: %v", doc, err)
	}
	out := map[string]json.RawMessage{}
	for _, p := range parsed.Profiles {
		for _, pc := range p.PluginConfig {
			out[pc.Name] = pc.Args
		}
	}
	return out
}

func decode[T any](t *testing.T, raw json.RawMessage, into *T) *T {
	t.Helper()
	if raw == nil {
		t.Fatal("the chart renders no args for the plugin")
	}
	if err := json.Unmarshal(raw, into); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	return into
}

// TestValuesAreTheSchemeDefaults holds the chart's values.yaml to the
// plugins' scheme defaults, the one source of every default: the args the
// chart renders with its own values, defaulted, are the args the scheme
// gives a profile that sets nothing, except where the chart chooses
// otherwise on purpose (listed in each case).
func TestValuesAreTheSchemeDefaults(t *testing.T) {
	cfg, err := Render(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sched := pluginArgs(t, cfg.SchedulerConfig)
	desched := pluginArgs(t, cfg.DeschedulerPolicy)
	resourceCmp := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })

	t.Run("LoadAware", func(t *testing.T) {
		got := decode(t, sched["LoadAware"], &config.LoadAwareArgs{})
		config.SetDefaults_LoadAwareArgs(got)
		// The chart's choices: LoadVariationRiskBalancing and
		// PodCountBalance are on, scored as terms of LoadAware's score at
		// the values' weights, 5, 1 and 1; and LoadAware reads the
		// descheduler's planned moves from the ConfigMap of the release,
		// which only the chart can name.
		want := &config.LoadAwareArgs{
			Settings: loadmodel.Settings{
				ScoringStrategy: &config.ScoringStrategy{Weight: 5},
			},
			VariationRisk:   &config.VariationRiskTerm{},
			PodCountBalance: &config.PodCountBalanceTerm{},
			PlannedMoves:    &config.PlannedMoves{Namespace: "ballast-system", Name: "ballast-descheduler-moves"},
		}
		config.SetDefaults_LoadAwareArgs(want)
		if diff := cmp.Diff(want, got, resourceCmp); diff != "" {
			t.Errorf("values.yaml scheduler.plugins.loadAware (with the risk and pod count terms) differs from the scheme's defaults (-scheme,+values):\n%s", diff)
		}
	})
	t.Run("LoadVariationRiskBalancing", func(t *testing.T) {
		// Without LoadAware the risk is a plugin of its own, on the same values.
		cfg, err := Render(context.Background(), map[string]any{"scheduler": map[string]any{"plugins": map[string]any{"loadAware": map[string]any{"enabled": false}}}})
		if err != nil {
			t.Fatal(err)
		}
		got := decode(t, pluginArgs(t, cfg.SchedulerConfig)["LoadVariationRiskBalancing"], &config.LoadVariationRiskBalancingArgs{})
		config.SetDefaults_LoadVariationRiskBalancingArgs(got)
		want := &config.LoadVariationRiskBalancingArgs{}
		config.SetDefaults_LoadVariationRiskBalancingArgs(want)
		if diff := cmp.Diff(want, got, resourceCmp); diff != "" {
			t.Errorf("values.yaml scheduler.plugins.loadVariationRiskBalancing differs from the scheme's defaults (-scheme,+values):\n%s", diff)
		}
	})
	t.Run("LoadAwareBalance", func(t *testing.T) {
		got := decode(t, desched[loadawarebalance.PluginName], &loadawarebalance.LoadAwareBalanceArgs{})
		loadawarebalance.SetDefaults_LoadAwareBalanceArgs(got)
		want := &loadawarebalance.LoadAwareBalanceArgs{}
		loadawarebalance.SetDefaults_LoadAwareBalanceArgs(want)
		// The chart's choices: it balances around the mean, which the
		// plugin leaves off unless asked (docs/descheduler.md), and its
		// descheduler scope is rendered from descheduler-level values.
		want.DeviationThresholds = balance.ResourceThresholds{usage.CPU: 10, usage.Memory: 10}
		want.Namespaces, got.Namespaces = nil, nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("values.yaml descheduler.loadAwareBalance differs from the scheme's defaults (-scheme,+values):\n%s", diff)
		}
	})
	t.Run("SpreadReplicas", func(t *testing.T) {
		got := decode(t, desched[spreadreplicas.PluginName], &spreadreplicas.SpreadReplicasArgs{})
		spreadreplicas.SetDefaults_SpreadReplicasArgs(got)
		want := &spreadreplicas.SpreadReplicasArgs{}
		spreadreplicas.SetDefaults_SpreadReplicasArgs(want)
		want.Namespaces, got.Namespaces = nil, nil
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("values.yaml descheduler.spreadReplicas differs from the scheme's defaults (-scheme,+values):\n%s", diff)
		}
	})
}

// TestSchemaAgreesWithValidation holds values.schema.json to the plugins'
// validators: a value the chart's schema refuses is one the plugin refuses,
// and a boundary value the plugin takes renders.
func TestSchemaAgreesWithValidation(t *testing.T) {
	lab := func(y string) runtime.Object {
		a := &loadawarebalance.LoadAwareBalanceArgs{}
		if err := yaml.UnmarshalStrict([]byte(y), a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	spread := func(y string) runtime.Object {
		a := &spreadreplicas.SpreadReplicasArgs{}
		if err := yaml.UnmarshalStrict([]byte(y), a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	loadAware := func(args string) func() error {
		return func() error {
			a := &config.LoadAwareArgs{}
			if err := yaml.UnmarshalStrict([]byte(args), a); err != nil {
				return err
			}
			config.SetDefaults_LoadAwareArgs(a)
			return config.ValidateLoadAwareArgs(nil, a)
		}
	}
	tests := []struct {
		name   string
		values string       // chart values
		plugin func() error // the plugin's validation of the same setting
		valid  bool
	}{
		{name: "scheduler threshold above 100", values: `scheduler: {plugins: {loadAware: {thresholds: {cpu: 101}}}}`,
			plugin: loadAware(`thresholds: {cpu: 101}`)},
		{name: "scheduler threshold of 100", values: `scheduler: {plugins: {loadAware: {thresholds: {cpu: 100}}}}`,
			plugin: loadAware(`thresholds: {cpu: 100}`), valid: true},
		{name: "scheduler threshold of 0", values: `scheduler: {plugins: {loadAware: {thresholds: {memory: 0}}}}`,
			plugin: loadAware(`thresholds: {memory: 0}`)},
		{name: "unknown statistic", values: `global: {thresholdStatistics: {memory: Median}}`,
			plugin: loadAware(`thresholdStatistics: {memory: Median}`)},
		{name: "p95 statistic", values: `global: {thresholdStatistics: {memory: P95}}`,
			plugin: loadAware(`thresholdStatistics: {memory: P95}`), valid: true},
		{name: "unknown strategy", values: `scheduler: {plugins: {loadAware: {scoringStrategy: {type: MostLoaded}}}}`,
			plugin: loadAware(`scoringStrategy: {type: MostLoaded}`)},
		{name: "unknown combination", values: `scheduler: {plugins: {loadAware: {scoringStrategy: {combine: Average}}}}`,
			plugin: loadAware(`scoringStrategy: {combine: Average}`)},
		{name: "unequal weights under the bottleneck", values: `scheduler: {plugins: {loadAware: {scoringStrategy: {resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]}}}}`,
			plugin: loadAware(`scoringStrategy: {resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]}`)},
		{name: "unequal weights under the weighted mean", values: `scheduler: {plugins: {loadAware: {scoringStrategy: {combine: WeightedMean, resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]}}}}`,
			plugin: loadAware(`scoringStrategy: {combine: WeightedMean, resources: [{name: cpu, weight: 2}, {name: memory, weight: 1}]}`), valid: true},
		{name: "eviction cap of 0", values: `descheduler: {loadAwareBalance: {maxEvictionsPerNode: 0}}`,
			plugin: func() error { return loadawarebalance.ValidateLoadAwareBalanceArgs(lab(`maxEvictionsPerNode: 0`)) }},
		{name: "eviction cap of 1", values: `descheduler: {loadAwareBalance: {maxEvictionsPerNode: 1}}`,
			plugin: func() error { return loadawarebalance.ValidateLoadAwareBalanceArgs(lab(`maxEvictionsPerNode: 1`)) }, valid: true},
		{name: "negative low threshold", values: `descheduler: {loadAwareBalance: {lowThresholds: {memory: -1}}}`,
			plugin: func() error { return loadawarebalance.ValidateLoadAwareBalanceArgs(lab(`lowThresholds: {memory: -1}`)) }},
		{name: "zero deviation", values: `descheduler: {loadAwareBalance: {deviationThresholds: {cpu: 0}}}`,
			plugin: func() error {
				return loadawarebalance.ValidateLoadAwareBalanceArgs(lab(`deviationThresholds: {cpu: 0}`))
			}},
		{name: "balance cooldown shorter than the eviction cooldown", values: `descheduler: {loadAwareBalance: {evictionCooldown: 1h, balanceCooldown: 30m}}`,
			plugin: func() error {
				return loadawarebalance.ValidateLoadAwareBalanceArgs(lab(`{evictionCooldown: 1h, balanceCooldown: 30m}`))
			}},
		{name: "balance cooldown in other units", values: `descheduler: {spreadReplicas: {evictionCooldown: 90s, balanceCooldown: 1m30s}}`,
			plugin: func() error {
				return spreadreplicas.ValidateSpreadReplicasArgs(spread(`{evictionCooldown: 90s, balanceCooldown: 1m30s}`))
			}, valid: true},
		{name: "spread balance cooldown shorter", values: `descheduler: {spreadReplicas: {evictionCooldown: 2h, balanceCooldown: 1h59m}}`,
			plugin: func() error {
				return spreadreplicas.ValidateSpreadReplicasArgs(spread(`{evictionCooldown: 2h, balanceCooldown: 1h59m}`))
			}},
		{name: "spread high threshold above 100", values: `descheduler: {spreadReplicas: {highThresholds: {cpu: 101}}}`,
			plugin: func() error { return spreadreplicas.ValidateSpreadReplicasArgs(spread(`highThresholds: {cpu: 101}`)) }},
		{name: "no scheduler names", values: `descheduler: {schedulerNames: []}`,
			plugin: func() error { return spreadreplicas.ValidateSpreadReplicasArgs(spread(`schedulerNames: []`)) }},
		{name: "include and exclude namespaces", values: `descheduler: {namespaces: {include: [apps], exclude: [batch]}}`,
			plugin: func() error {
				return loadawarebalance.ValidateLoadAwareBalanceArgs(lab(`namespaces: {include: [apps], exclude: [batch]}`))
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var vals map[string]any
			if err := yaml.Unmarshal([]byte(tt.values), &vals); err != nil {
				t.Fatal(err)
			}
			_, chartErr := Render(context.Background(), vals)
			pluginErr := tt.plugin()
			if tt.valid {
				if chartErr != nil || pluginErr != nil {
					t.Errorf("valid setting refused: chart %v, plugin %v", chartErr, pluginErr)
				}
				return
			}
			if chartErr == nil {
				t.Errorf("the chart's schema takes %s, which the plugin refuses (%v)", tt.values, pluginErr)
			}
			if pluginErr == nil {
				t.Errorf("the plugin takes %s, which the chart refuses (%v)", tt.values, chartErr)
			}
		})
	}
}
