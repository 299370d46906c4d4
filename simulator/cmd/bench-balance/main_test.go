package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestMain lets the test binary stand in for bench-balance's own when
// -jobs runs a scenario in a process of its own (-one).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "-one" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Scenarios run in processes of their own, two at a time, give the
// comparisons one process gives running them in turn: the same digests, in
// the scenarios' order.
func TestJobsGiveTheSameResults(t *testing.T) {
	if testing.Short() {
		t.Skip("runs eight simulations; run without -short")
	}
	const tiny = "name: %s\nduration: 3m\nstep: 15s\nseed: %d\nnodes:\n" +
		"- {name: pi, cpu: \"4\", memory: 4Gi}\n- {name: mini, cpu: \"4\", memory: 16Gi}\nworkloads:\n" +
		"- {name: web, replicas: %d, requests: {cpu: 100m, memory: 128Mi}, usage: {cpu: {type: noisy, value: 300m, stddev: 50m}, memory: {type: constant, value: 256Mi}}}\n"
	var scenarios []*scenario.Scenario
	for i, name := range []string{"tiny-a", "tiny-b"} {
		sc, err := scenario.Parse(fmt.Appendf(nil, tiny, name, i+1, 3+2*i))
		if err != nil {
			t.Fatal(err)
		}
		scenarios = append(scenarios, sc)
	}
	children, err := compareInChildren(t.Context(), scenarios, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i, sc := range scenarios {
		here, err := compareRounds(t.Context(), sc, 1)
		if err != nil {
			t.Fatal(err)
		}
		if children[i].Scenario != sc.Name {
			t.Errorf("result %d is %s's, want %s's", i, children[i].Scenario, sc.Name)
		}
		if err := sameRuns(here, children[i]); err != nil {
			t.Errorf("%s in a process of its own: %v", sc.Name, err)
		}
	}
}

// A small sample of random homelabs, drawn as `make bench-random` draws a
// hundred, gets what every homelab must: never worse than the default
// scheduler, no loop, and the 90th percentile within its points of the
// best placement. The median of six runs is printed, not held: the
// benchmark's hundred are the measure of the distribution's goals
// (docs/performance.md). The seeds are fixed so that a run is repeatable;
// this sample catches a change that breaks balancing on clusters the
// shipped scenarios do not describe.
func TestARandomSampleMeetsTheGoals(t *testing.T) {
	if testing.Short() {
		t.Skip("runs twelve simulations; run without -short")
	}
	scenarios, err := randomScenarios(sampleSize, sampleSeed, "4-8", 30*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	results, err := compareInChildren(t.Context(), scenarios, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	writeTable(&out, results)
	if d := distribution(&out, results); !d.guaranteed() || d.p90 > p90OverOracle {
		t.Errorf("random homelabs %d to %d: a run worse than the default scheduler, a loop, or the 90th percentile over %.0f points of the best placement:\n%s",
			sampleSeed, sampleSeed+sampleSize-1, p90OverOracle, out.String())
	}
}

// The sample TestARandomSampleMeetsTheGoals runs.
const (
	sampleSize = 6
	sampleSeed = 1001
)
