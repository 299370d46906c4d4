package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

func TestSameRuns(t *testing.T) {
	run := func(spread float64) *record.Result {
		return &record.Result{Steps: []record.Step{{Nodes: []record.NodeStep{{Node: "a", CPU: spread}}}}, Summary: record.Summary{Spread: spread}}
	}
	same := &record.Comparison{Default: run(40), Ballast: run(20)}
	if err := sameRuns(same, &record.Comparison{Default: run(40), Ballast: run(20)}); err != nil {
		t.Errorf("alike runs: %v", err)
	}
	err := sameRuns(same, &record.Comparison{Default: run(40), Ballast: run(21)})
	if err == nil || !strings.Contains(err.Error(), "ballast run") || !strings.Contains(err.Error(), "node a") {
		t.Errorf("a Ballast run that differs: err = %v, want the run and where it differs named", err)
	}
}

func TestLoadScenarios(t *testing.T) {
	builtin, err := loadScenarios(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(builtin) != len(scenario.BuiltinNames()) {
		t.Errorf("no arguments: %d scenarios, want every built-in one (%d)", len(builtin), len(scenario.BuiltinNames()))
	}
	file := filepath.Join(t.TempDir(), "mine.yaml")
	mine := "name: my-cluster\nduration: 2m\nnodes:\n- {name: pi, cpu: \"4\", memory: 8Gi}\nworkloads:\n" +
		"- {name: web, replicas: 1, usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 64Mi}}}\n"
	if err := os.WriteFile(file, []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := loadScenarios([]string{"new-node", file})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, sc := range got {
		names = append(names, sc.Name)
	}
	if diff := cmp.Diff([]string{"new-node", "my-cluster"}, names); diff != "" {
		t.Errorf("scenarios (-want,+got):\n%s", diff)
	}
	if _, err := loadScenarios([]string{"no-such-scenario"}); err == nil {
		t.Errorf("an unknown name and no such file: want an error")
	}
}
