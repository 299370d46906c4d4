package loadmodel

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/usage"
)

func TestSchedulerSettings(t *testing.T) {
	const cfg = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: other
  pluginConfig:
  - name: LoadAware
    args: {thresholds: {cpu: 10}}
- schedulerName: ballast-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
  - name: LoadAware
    args:
      thresholds: {memory: 70}
      scoringStrategy: {type: TargetPacking, targetUtilization: 60, weight: 5}
      podCountBalance: {weight: 1}
      filterCriticalPods: true
- schedulerName: plain
`
	got, found, err := SchedulerSettings([]byte(cfg), "ballast-scheduler")
	if err != nil || !found {
		t.Fatalf("SchedulerSettings = found %v, %v", found, err)
	}
	if diff := cmp.Diff(map[usage.Resource]float64{usage.Memory: 70}, got.Thresholds); diff != "" {
		t.Errorf("thresholds (-want,+got):\n%s", diff)
	}
	if got.ScoringStrategy.Type != StrategyTargetPacking || *got.ScoringStrategy.TargetUtilization != 60 {
		t.Errorf("strategy = %+v, want TargetPacking at 60", got.ScoringStrategy)
	}
	// Defaulted where unset, as LoadAware defaults them.
	if got.Window.Duration != DefaultWindow || got.ScoringStrategy.Combine != DefaultCombination || *got.PodEstimate.RequestMultiplier != 1 {
		t.Errorf("defaults not applied: window %v, combine %q, multiplier %v", got.Window, got.ScoringStrategy.Combine, *got.PodEstimate.RequestMultiplier)
	}
	if s := got.Scorer(); s(60) <= s(20) {
		t.Errorf("the scorer prefers 20 %% over the 60 %% target: not TargetPacking")
	}

	for _, profile := range []string{"plain", "missing"} {
		def, found, err := SchedulerSettings([]byte(cfg), profile)
		if err != nil || found {
			t.Errorf("profile %q: found %v, %v; want the defaults, not found", profile, found, err)
		}
		if diff := cmp.Diff(DefaultSettings(), def); diff != "" {
			t.Errorf("profile %q: not the defaults (-want,+got):\n%s", profile, diff)
		}
	}
}

func TestSchedulerSettingsRefusesWhatLoadAwareRefuses(t *testing.T) {
	for _, tt := range []struct{ args, field string }{
		{`{thresholds: {cpu: 0}}`, "profiles[0].pluginConfig[0].args.thresholds[cpu]"},
		{`{scoringStrategy: {type: MostLoaded}}`, "profiles[0].pluginConfig[0].args.scoringStrategy.type"},
		{`{scoringStrategy: {resources: [{name: cpu, weight: 1}, {name: memory, weight: 2}]}}`, "profiles[0].pluginConfig[0].args.scoringStrategy.resources[1].weight"},
		{`{window: 0s}`, "profiles[0].pluginConfig[0].args.window"},
		{`{podEstimate: {requestMultiplier: -1}}`, "profiles[0].pluginConfig[0].args.podEstimate.requestMultiplier"},
		{`{podEstimate: {defaultCPU: 8Ei}}`, "profiles[0].pluginConfig[0].args.podEstimate.defaultCPU"},
		{`{podEstimate: {defaultMemory: 1e19}}`, "profiles[0].pluginConfig[0].args.podEstimate.defaultMemory"},
		{`{thresholds: 85}`, "profiles[0].pluginConfig[0].args"},
	} {
		cfg := "profiles:\n- schedulerName: s\n  pluginConfig:\n  - name: LoadAware\n    args: " + tt.args + "\n"
		_, _, err := SchedulerSettings([]byte(cfg), "s")
		if err == nil || !strings.Contains(err.Error(), tt.field) {
			t.Errorf("args %s: error %v, want one naming %s", tt.args, err, tt.field)
		}
	}
}
