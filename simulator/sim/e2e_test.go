package sim

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
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

// daemonsOnEveryNode: DaemonSets beside a Deployment, one of them for one
// architecture, a node that joins and one that is cordoned, and a node
// hot enough that the descheduler moves pods off it.
const daemonsOnEveryNode = `
name: daemons-on-every-node
duration: 12m
step: 15s
seed: 3
nodes:
- {name: pi-1, cpu: "4", memory: 4Gi, arch: arm64, background: {cpu: 200m, memory: 600Mi}}
- {name: pi-2, cpu: "4", memory: 4Gi, arch: arm64, background: {cpu: 200m, memory: 600Mi}, unschedulable: true}
- {name: mini, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: pi-3, cpu: "4", memory: 4Gi, arch: arm64, background: {cpu: 200m, memory: 600Mi}, absent: true}
workloads:
- name: exporter
  kind: DaemonSet
  requests: {cpu: 50m, memory: 64Mi}
  usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 200Mi}}
- name: arm-agent
  kind: DaemonSet
  nodeSelector: {kubernetes.io/arch: arm64}
  requests: {cpu: 50m, memory: 64Mi}
  usage: {cpu: {type: noisy, value: 300m, stddev: 50m}, memory: {type: constant, value: 300Mi}}
- name: web
  replicas: 8
  requests: {cpu: 50m, memory: 64Mi}
  usage: {cpu: {type: noisy, value: 400m, stddev: 50m}, memory: {type: constant, value: 300Mi}}
events:
- {at: 1m, type: hog, node: pi-1, resources: {cpu: "2"}, for: 8m}
- {at: 4m, type: join, node: pi-3}
`

// A DaemonSet's pods run on every node its selector matches, cordoned or
// joined later, in both runs, and the descheduler never moves one.
func TestDaemonSetsStayOnTheirNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes; run without -short")
	}
	sc, err := scenario.Parse([]byte(daemonsOnEveryNode))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int{
		"pi-1": {"exporter": 1, "arm-agent": 1},
		"pi-2": {"exporter": 1, "arm-agent": 1},
		"pi-3": {"exporter": 1, "arm-agent": 1},
		"mini": {"exporter": 1},
	}
	for mode, r := range map[string]*record.Result{"default": c.Default, "ballast": c.Ballast} {
		got := map[string]map[string]int{}
		web := 0
		for _, n := range r.Summary.Final {
			got[n.Node] = map[string]int{}
			for w, k := range n.Workloads {
				if w == "web" {
					web += k
					continue
				}
				got[n.Node][w] = k
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: DaemonSet pods at the end (-want,+got):\n%s", mode, diff)
		}
		if web != 8 || r.Summary.Pending != 0 {
			t.Errorf("%s: %d web pods placed, %d pending; want 8 and none", mode, web, r.Summary.Pending)
		}
		for _, m := range r.Moves {
			if m.Workload != "web" {
				t.Errorf("%s: moved a pod of DaemonSet %s off %s", mode, m.Workload, m.From)
			}
		}
	}
	if c.Ballast.Evictions == 0 {
		t.Error("the descheduler moved nothing off the hogged pi-1: the check above proves nothing about it")
	}
}
