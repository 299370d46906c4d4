package sim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// hogThenRollout is short on purpose: a hog makes node-2 busy while its
// requests look empty, then a rollout arrives.
const hogThenRollout = `
name: hog-then-rollout
duration: 4m
step: 15s
seed: 2
nodes:
- {name: node-1, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-2, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
workloads:
- name: api
  replicas: 0
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: noisy, value: 300m, stddev: 30m}
    memory: {type: constant, value: 512Mi}
events:
- {at: 0s, type: hog, node: node-2, resources: {cpu: "2", memory: 4Gi}}
- {at: 1m, type: scale, workload: api, replicas: 8}
`

// TestBallastBalancesBetterThanDefault runs the whole stack twice on the
// same usage and checks the direction of the result.
func TestBallastBalancesBetterThanDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes; run without -short")
	}
	sc, err := scenario.Parse([]byte(hogThenRollout))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, b := c.Default.Summary, c.Ballast.Summary
	t.Logf("default: spread %.1f cv %.2f hottest %s; ballast: spread %.1f cv %.2f hottest %s; placed on hog: %d vs %d",
		d.Spread, d.CV, d.Hottest, b.Spread, b.CV, b.Hottest, c.Default.PlacedOnHog, c.Ballast.PlacedOnHog)
	if b.Spread >= d.Spread {
		t.Errorf("Ballast's spread %.1f is not below the default scheduler's %.1f", b.Spread, d.Spread)
	}
	if c.Ballast.PlacedOnHog > c.Default.PlacedOnHog {
		t.Errorf("Ballast placed %d pods on the hogged node, more than the default scheduler's %d", c.Ballast.PlacedOnHog, c.Default.PlacedOnHog)
	}
	if got := len(c.Ballast.Steps); got != 17 {
		t.Errorf("recorded %d steps, want 17 (0s to 4m every 15s)", got)
	}
	if b.Pending != 0 || d.Pending != 0 {
		t.Errorf("pods pending at the end: default %d, ballast %d", d.Pending, b.Pending)
	}

	// The same scenario and seed again: the same pods of each workload end
	// on each node, with the same usage.
	again, err := Run(context.Background(), sc, ModeBallast, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c.Ballast.Summary.Final, again.Summary.Final); diff != "" {
		t.Errorf("a second run with seed %d ended differently (-first,+second):\n%s", sc.Seed, diff)
	}
}
