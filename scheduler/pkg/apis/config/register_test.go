package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/usage"
)

func loadConfig(t *testing.T, yaml string) (map[string]any, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := options.LoadConfigFromFile(ktesting.NewLogger(t, ktesting.DefaultConfig), path)
	if err != nil {
		return nil, err
	}
	args := map[string]any{}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		args[pc.Name] = pc.Args
	}
	return args, nil
}

func TestPluginArgsDecodeFromSchedulerConfig(t *testing.T) {
	args, err := loadConfig(t, `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: LoadAware
      - name: LoadVariationRiskBalancing
  pluginConfig:
  - name: LoadAware
    args:
      thresholds: {memory: 75}
      scoringStrategy: {type: TargetPacking, targetUtilization: 60}
      window: 1m
`)
	if err != nil {
		t.Fatalf("loading config: %v", err)
	}
	la, ok := args["LoadAware"].(*LoadAwareArgs)
	if !ok {
		t.Fatalf("LoadAware args decoded as %T, want *LoadAwareArgs", args["LoadAware"])
	}
	if diff := cmp.Diff(map[usage.Resource]float64{usage.Memory: 75}, la.Thresholds); diff != "" {
		t.Errorf("thresholds (-want,+got):\n%s", diff)
	}
	if la.ScoringStrategy.Type != TargetPacking || *la.ScoringStrategy.TargetUtilization != 60 || la.Window.Duration != time.Minute {
		t.Errorf("strategy/window not decoded: %+v, window %v", *la.ScoringStrategy, la.Window)
	}
	// Fields left out of the file are defaulted by the scheduler's own defaulting.
	if la.PodEstimate == nil || *la.PodEstimate.RequestMultiplier != 1 {
		t.Errorf("podEstimate not defaulted: %+v", la.PodEstimate)
	}
	// An enabled plugin without a pluginConfig entry gets defaulted args.
	lv, ok := args["LoadVariationRiskBalancing"].(*LoadVariationRiskBalancingArgs)
	if !ok {
		t.Fatalf("LoadVariationRiskBalancing args are %T, want defaulted *LoadVariationRiskBalancingArgs", args["LoadVariationRiskBalancing"])
	}
	if diff := cmp.Diff(ptr.To(1.0), lv.SafeVarianceMargin); diff != "" {
		t.Errorf("margin (-want,+got):\n%s", diff)
	}
}

func TestUnknownArgFieldIsRejected(t *testing.T) {
	_, err := loadConfig(t, `
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: ballast-scheduler
  pluginConfig:
  - name: LoadAware
    args:
      treshold: {cpu: 50}
`)
	if err == nil || !strings.Contains(err.Error(), "treshold") {
		t.Fatalf("loading config with a misspelt field: err = %v, want an error naming \"treshold\"", err)
	}
}
