package config

import (
	"encoding/json"
	"fmt"
	"testing"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	"sigs.k8s.io/yaml"
)

// fuzzPlugin is what the fuzz target needs of one plugin's args: the plugin
// name kube-scheduler looks the args type up by, its defaulter and its validator.
type fuzzPlugin struct {
	name     string
	empty    func() runtime.Object
	defaults func(runtime.Object)
	validate func(*field.Path, runtime.Object) error
}

func fuzzPlugins() []fuzzPlugin {
	return []fuzzPlugin{
		{
			name:     "LoadAware",
			empty:    func() runtime.Object { return &LoadAwareArgs{} },
			defaults: func(o runtime.Object) { SetDefaults_LoadAwareArgs(o.(*LoadAwareArgs)) },
			validate: func(p *field.Path, o runtime.Object) error { return ValidateLoadAwareArgs(p, o.(*LoadAwareArgs)) },
		},
		{
			name:  "LoadVariationRiskBalancing",
			empty: func() runtime.Object { return &LoadVariationRiskBalancingArgs{} },
			defaults: func(o runtime.Object) {
				SetDefaults_LoadVariationRiskBalancingArgs(o.(*LoadVariationRiskBalancingArgs))
			},
			validate: func(p *field.Path, o runtime.Object) error {
				return ValidateLoadVariationRiskBalancingArgs(p, o.(*LoadVariationRiskBalancingArgs))
			},
		},
		{
			name:     "UsageAwareFit",
			empty:    func() runtime.Object { return &UsageAwareFitArgs{} },
			defaults: func(o runtime.Object) { SetDefaults_UsageAwareFitArgs(o.(*UsageAwareFitArgs)) },
			validate: func(p *field.Path, o runtime.Object) error {
				return ValidateUsageAwareFitArgs(p, o.(*UsageAwareFitArgs))
			},
		},
	}
}

// decodePluginArgs decodes a kube-scheduler configuration whose one profile
// configures plugin with args (YAML or JSON), the way kube-scheduler reads its
// config file: v1, defaulted, converted to the internal version.
func decodePluginArgs(plugin string, args []byte) (runtime.Object, error) {
	raw, err := yaml.YAMLToJSON(args)
	if err != nil {
		return nil, fmt.Errorf("args are not YAML: %w", err)
	}
	doc, err := json.Marshal(map[string]any{
		"apiVersion": "kubescheduler.config.k8s.io/v1",
		"kind":       "KubeSchedulerConfiguration",
		"profiles": []any{map[string]any{
			"schedulerName": "ballast-scheduler",
			"pluginConfig":  []any{map[string]any{"name": plugin, "args": json.RawMessage(raw)}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("args are not a JSON value: %w", err)
	}
	obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode(doc, nil, nil)
	if err != nil {
		return nil, err
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("decoded a %T, want a KubeSchedulerConfiguration", obj)
	}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if pc.Name == plugin {
			return pc.Args, nil
		}
	}
	return nil, fmt.Errorf("no pluginConfig for %s after decoding", plugin)
}

// FuzzPluginArgs decodes arbitrary args for each plugin through
// kube-scheduler's scheme, as its config file is read, and validates them.
// Nothing may panic; the decoded args must be of the plugin's type and
// already defaulted (defaulting again changes nothing); validation must not
// change them and must say the same thing twice. Args that validate must
// survive a round trip through the config file unchanged and still validate.
func FuzzPluginArgs(f *testing.F) {
	plugins := fuzzPlugins()
	for i, p := range plugins {
		// The shipped defaults, as the defaulter fills them in.
		shipped := p.empty()
		p.defaults(shipped)
		data, err := json.Marshal(shipped)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), data)
		f.Add(uint8(i), []byte(`{}`))
	}
	// The chart's LoadAware args (charts/ballast/values.yaml), and a few edges.
	f.Add(uint8(0), []byte("thresholds: {cpu: 85, memory: 90}\nthresholdStatistics: {cpu: Average, memory: Latest}\n"+
		"scoringStrategy:\n  type: LeastLoaded\n  resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]\n  targetUtilization: 70\n"+
		"window: 5m\npodEstimate: {requestMultiplier: 1.0, defaultCPU: 100m, defaultMemory: 200Mi}\n"))
	f.Add(uint8(0), []byte(`{"thresholds":{"gpu":50},"scoringStrategy":{"type":"TargetPacking","targetUtilization":0},"window":"-1m"}`))
	f.Add(uint8(1), []byte(`{"safeVarianceMargin":-1,"resources":[{"name":"cpu","weight":1000}]}`))
	f.Add(uint8(2), []byte(`{"maxOvercommit":{"cpu":0.5},"podEstimate":{"defaultCPU":"-1"}}`))
	f.Add(uint8(2), []byte(`null`))

	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		p := plugins[int(which)%len(plugins)]
		args, err := decodePluginArgs(p.name, data)
		if err != nil {
			return // refused while decoding: kube-scheduler would not start
		}
		want := p.empty()
		if fmt.Sprintf("%T", args) != fmt.Sprintf("%T", want) {
			t.Fatalf("%s args decoded as %T, want %T", p.name, args, want)
		}
		redefaulted := args.DeepCopyObject()
		p.defaults(redefaulted)
		if !apiequality.Semantic.DeepEqual(args, redefaulted) {
			t.Fatalf("decoded %s args were not fully defaulted:\n decoded %#v\n defaulted again %#v", p.name, args, redefaulted)
		}
		before := args.DeepCopyObject()
		path := field.NewPath("args")
		err = p.validate(path, args)
		if !apiequality.Semantic.DeepEqual(args, before) {
			t.Fatalf("validating %s args changed them", p.name)
		}
		if again := p.validate(path, args); fmt.Sprint(again) != fmt.Sprint(err) {
			t.Fatalf("validating %s args twice: %v, then %v", p.name, err, again)
		}
		if err != nil {
			return
		}

		encoded, err := json.Marshal(args)
		if err != nil {
			t.Fatalf("encoding valid %s args: %v", p.name, err)
		}
		back, err := decodePluginArgs(p.name, encoded)
		if err != nil {
			t.Fatalf("valid %s args %s do not decode again: %v", p.name, encoded, err)
		}
		if !apiequality.Semantic.DeepEqual(args, back) {
			t.Fatalf("valid %s args changed in a round trip:\n before %#v\n after %#v", p.name, args, back)
		}
		if err := p.validate(path, back); err != nil {
			t.Fatalf("valid %s args are invalid after a round trip: %v", p.name, err)
		}
	})
}
