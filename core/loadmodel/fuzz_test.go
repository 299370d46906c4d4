package loadmodel

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/usage"
)

// FuzzSchedulerSettings reads arbitrary bytes as the scheduler's
// configuration file, as the descheduler reads it (--scheduler-config, the
// scheduler's ConfigMap mounted): nothing may panic; a refusal says why and
// gives no settings; a profile without LoadAware args gives the defaults;
// settings that are found are defaulted and valid, read the same once
// written back as args, and make a model that estimates, predicts and
// scores in range.
func FuzzSchedulerSettings(f *testing.F) {
	const profile = "ballast-scheduler"
	// What the chart renders (charts/ballast/charts/scheduler), with its
	// default values.
	chart := "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nleaderElection:\n  leaderElect: true\n" +
		"profiles:\n  - schedulerName: ballast-scheduler\n    plugins:\n      multiPoint:\n        enabled:\n          - name: LoadAware\n            weight: 5\n" +
		"    pluginConfig:\n      - name: LoadAware\n        args:\n          thresholds: {cpu: 85, memory: 90}\n" +
		"          thresholdStatistics: {cpu: Average, memory: Latest}\n          filterCriticalPods: false\n" +
		"          scoringStrategy:\n            type: LeastLoaded\n            resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]\n" +
		"            combine: Bottleneck\n            targetUtilization: 70\n          window: 5m\n" +
		"          podEstimate: {requestMultiplier: 1.0, defaultCPU: 100m, defaultMemory: 200Mi}\n" +
		"          variationRisk: {weight: 1, safeVarianceMargin: 1, safeVarianceSensitivity: 1}\n          podCountBalance: {weight: 1}\n"
	f.Add([]byte(chart))
	f.Add([]byte(chart[:len(chart)/2]))
	args := func(a string) []byte {
		return []byte("profiles:\n- schedulerName: ballast-scheduler\n  pluginConfig:\n  - name: LoadAware\n    args: " + a + "\n")
	}
	f.Add(args(`{scoringStrategy: {type: TargetPacking, targetUtilization: 60, resources: [{name: memory, weight: 3}, {name: cpu, weight: 1}], combine: WeightedMean}}`))
	f.Add(args(`{thresholds: {memory: 70, gpu: 5}, window: -1m, scoringStrategy: {type: MostAllocated, weight: 101}}`))
	f.Add(args(`{thresholdStatistics: {cpu: P95, memory: Median}}`))
	// Estimates beyond what an int64 of millicores or bytes holds.
	f.Add(args(`{podEstimate: {requestMultiplier: 1e300}}`))
	f.Add(args(`{podEstimate: {defaultCPU: 8Ei, defaultMemory: 1e19}}`))
	f.Add(args(`{podEstimate: {requestMultiplier: 5e-324, defaultCPU: 1n}}`))
	f.Add(args(`null`))
	f.Add(args(`[]`))
	f.Add(args(`"LoadAware"`))
	f.Add([]byte("profiles:\n- schedulerName: ballast-scheduler\n  pluginConfig:\n  - {name: LoadAware, args: {thresholds: {cpu: 10}}}\n" +
		"  - {name: LoadAware, args: {thresholds: {cpu: 0}}}\n- schedulerName: ballast-scheduler\n"))
	f.Add([]byte("profiles:\n- schedulerName: other\n  pluginConfig:\n  - {name: LoadAware, args: {window: 0s}}\n"))
	f.Add([]byte("profiles: {ballast-scheduler: {}}\n"))
	f.Add([]byte(""))
	f.Add([]byte("{"))
	f.Add([]byte(strings.Repeat("- ", 5000)))

	path := field.NewPath("args")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, found, err := SchedulerSettings(data, profile)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("a refusal that says nothing")
			}
			if found || !cmp.Equal(s, Settings{}) {
				t.Fatalf("settings %+v (found %v) with error %v", s, found, err)
			}
			return
		}
		if !found {
			if diff := cmp.Diff(DefaultSettings(), s); diff != "" {
				t.Fatalf("no LoadAware args, and not the defaults (-defaults,+got):\n%s", diff)
			}
		}
		if errs := ValidateSettings(path, &s); len(errs) > 0 {
			t.Fatalf("accepted settings are invalid: %v", errs.ToAggregate())
		}
		again := *s.DeepCopy()
		again.SetDefaults()
		if diff := cmp.Diff(s, again); diff != "" {
			t.Fatalf("accepted settings were not fully defaulted (-read,+defaulted again):\n%s", diff)
		}
		if found {
			encoded, err := json.Marshal(s)
			if err != nil {
				t.Fatalf("accepted settings do not encode: %v", err)
			}
			back, found, err := SchedulerSettings(args(string(encoded)), profile)
			if err != nil || !found {
				t.Fatalf("accepted settings written back as args: found %v, %v\n%s", found, err, encoded)
			}
			if diff := cmp.Diff(s, back); diff != "" {
				t.Fatalf("accepted settings changed once written back (-read,+read again):\n%s", diff)
			}
		}
		modelInRange(t, &s)
	})
}

// modelInRange fails t unless the defaulted settings s make a model that
// estimates pods at no less than nothing, and scores in 0–100.
func modelInRange(t *testing.T, s *Settings) {
	t.Helper()
	o := s.PodEstimate.Options()
	if o.DefaultMilliCPU < 0 || o.DefaultMemory < 0 {
		t.Fatalf("default estimate of %dm CPU and %d bytes", o.DefaultMilliCPU, o.DefaultMemory)
	}
	requests := v1.ResourceList{v1.ResourceCPU: resource.MustParse("500m"), v1.ResourceMemory: resource.MustParse("1Gi")}
	for _, pod := range []*v1.Pod{
		{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "none"}}}},
		{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "requests", Resources: v1.ResourceRequirements{Requests: requests}}}}},
	} {
		if est := EstimatePod(pod, o); est.MilliCPU < 0 || est.Memory < 0 {
			t.Fatalf("pod %s estimated at %dm CPU and %d bytes", pod.Spec.Containers[0].Name, est.MilliCPU, est.Memory)
		}
	}
	weights, scorer := s.Weights(), s.Scorer()
	for _, u := range []float64{-1, 0, 30, 70, 100, 150} {
		preds := []Prediction{{Resource: usage.CPU, Current: u}, {Resource: usage.Memory, Current: u, Pod: 5}}
		if score := s.ScoringStrategy.Combine.Score(preds, weights, scorer); score < 0 || score > MaxScore {
			t.Fatalf("score %d at %v %% usage", score, u)
		}
	}
}
