package sim

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/simulator/sim/record"

	"github.com/google/go-cmp/cmp"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestValuesErrorsStopBeforeAnythingRuns: with --save, a scenario that
// started loading would be written; refused values must leave no file.
func TestValuesErrorsStopBeforeAnythingRuns(t *testing.T) {
	refused := writeFile(t, "refused.yaml", "scheduler: {plugins: {loadAware: {thresholds: {memory: 120}}}}\n")
	failing := writeFile(t, "failing.yaml", "descheduler: {replicas: 3, leaderElection: {enabled: false}}\n")
	policy := writeFile(t, "policy.yaml", "kind: DeschedulerPolicy\n")
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"schema", []string{"-f", refused}, []string{"the chart does not accept the values", "/scheduler/plugins/loadAware/thresholds/memory"}},
		{"template check", []string{"--values", failing}, []string{"descheduler.replicas > 1 requires descheduler.leaderElection.enabled=true"}},
		{"values and raw files", []string{"-f", refused, "--descheduler-policy", policy}, []string{"-f/--values", "--descheduler-policy", "not both"}},
		{"set and raw files", []string{"--set", "scheduler.replicas=1", "--scheduler-config", policy, "--descheduler-policy", policy},
			[]string{"--set and --scheduler-config, --descheduler-policy both configure"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saved := filepath.Join(t.TempDir(), "scenario.yaml")
			out, err := run(t, append([]string{"--scenario", "new-node", "--save", saved}, tc.args...)...)
			if err == nil {
				t.Fatalf("no error; output:\n%.300s", out)
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("err = %v, want it to mention %q", err, want)
				}
			}
			if _, statErr := os.Stat(saved); !os.IsNotExist(statErr) {
				t.Errorf("the scenario was saved (stat: %v): the command went on after the error", statErr)
			}
		})
	}
}

// tightScenario has nodes at 37.5 % memory before any pod: the chart's
// 90 % LoadAware threshold admits its pods, a 20 % threshold filters out
// every node.
const tightScenario = `name: tight
duration: 1m
step: 15s
seed: 1
nodes:
- {name: node-a, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 3Gi}}
- {name: node-b, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 3Gi}}
workloads:
- name: web
  replicas: 4
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: constant, value: 100m}
    memory: {type: constant, value: 128Mi}
`

func TestValuesReachTheBallastRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes; run without -short")
	}
	sc := writeFile(t, "tight.yaml", tightScenario)
	// The descheduler's thresholds follow the scheduler's, as the chart
	// requires.
	vals := writeFile(t, "my-values.yaml", "scheduler: {plugins: {loadAware: {thresholds: {memory: 20}}}}\n"+
		"descheduler: {loadAwareBalance: {highThresholds: {memory: 20}, lowThresholds: {memory: 10}}, spreadReplicas: {highThresholds: {memory: 20}}}\n")
	out, err := run(t, sc, "-f", vals, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got record.Comparison
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output does not decode: %v\n%.300s", err, out)
	}
	want := record.Configuration{Source: record.ConfigValues, Inputs: []string{"-f " + vals}}
	if diff := cmp.Diff(want, got.Configuration); diff != "" {
		t.Errorf("configuration (-want,+got):\n%s", diff)
	}
	// Predicted memory is 37.5 % + 1.6 % for the pod on either node:
	// below the chart's default 90 %, above the 20 % of the values.
	if got.Default.Summary.Pending != 0 {
		t.Errorf("default run: %d pods pending, want 0", got.Default.Summary.Pending)
	}
	if got.Ballast.Summary.Pending != 4 {
		t.Errorf("Ballast run: %d pods pending, want all 4 kept off nodes above the 20%% memory threshold; final nodes %+v",
			got.Ballast.Summary.Pending, got.Ballast.Summary.Final)
	}
}
