package sim

import (
	"context"
	"runtime"
	"sync"
	"testing"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// everyKindOfTie is small but has each thing that made runs differ: nodes
// alike, so the scheduler breaks ties between them; two workloads whose pods
// use alike; a node joining; a process outside Kubernetes; a scale-down and
// a scale-up; a node down long enough that its pods are replaced in the step
// another workload scales up (two controllers making pods at once); usage
// with noise; and two descheduling cycles that move pods.
const everyKindOfTie = `
name: every-kind-of-tie
duration: 11m
step: 15s
seed: 7
nodes:
- {name: node-a, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-b, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-c, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-d, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}, absent: true}
workloads:
- name: web
  replicas: 6
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: noisy, value: 400m, stddev: 80m}
    memory: {type: constant, value: 512Mi}
- name: api
  replicas: 6
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: noisy, value: 400m, stddev: 80m}
    memory: {type: constant, value: 512Mi}
- name: batch
  replicas: 4
  requests: {cpu: 200m, memory: 256Mi}
  usage:
    cpu: {type: spike, value: 300m, peak: 1500m, at: 2m, for: 4m}
    memory: {type: constant, value: 1Gi}
events:
- {at: 1m, type: hog, node: node-a, resources: {cpu: 2500m, memory: 3Gi}}
- {at: 2m, type: reboot, node: node-c, for: 6m}
- {at: 3m, type: join, node: node-d}
- {at: 4m, type: scale, workload: web, replicas: 3}
- {at: 7m, type: scale, workload: api, replicas: 9}
`

// TestSameScenarioSameResult runs one scenario twice, the second time beside
// a CPU burner that keeps every core busy, and requires the same result to
// the last figure: a simulation waits for the cluster's own events, not for
// a length of real time, and leaves no choice to chance.
func TestSameScenarioSameResult(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four control planes; run without -short")
	}
	sc, err := scenario.Parse([]byte(everyKindOfTie))
	if err != nil {
		t.Fatal(err)
	}
	first, err := Compare(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if first.Ballast.Evictions == 0 {
		t.Fatalf("the scenario moved no pod: it no longer tests the descheduler's choices")
	}

	ctx, stop := context.WithCancel(context.Background())
	var burners sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		burners.Go(func() {
			for n := 0; ctx.Err() == nil; n++ {
				if n%1_000_000 == 0 {
					runtime.Gosched()
				}
			}
		})
	}
	second, err := Compare(context.Background(), sc, Options{})
	stop()
	burners.Wait()
	if err != nil {
		t.Fatal(err)
	}
	for _, pair := range []struct {
		mode          Mode
		first, second *record.Result
	}{{ModeDefault, first.Default, second.Default}, {ModeBallast, first.Ballast, second.Ballast}} {
		a, b := pair.first.Digest(), pair.second.Digest()
		t.Logf("%s: %s and %s (spread %.2f, %d evictions)", pair.mode, a, b, pair.first.Summary.Spread, pair.first.Evictions)
		if a != b {
			t.Errorf("%s run gave another result beside a CPU burner: %s then %s; first step that differs: %s",
				pair.mode, a, b, record.FirstDifference(pair.first, pair.second))
		}
	}
}
