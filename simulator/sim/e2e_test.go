package sim

import (
	"context"
	"testing"
	"time"

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

// outages: a Pi reboots past the pods' toleration of an unreachable node,
// another loses power for good, a third is drained.
const outages = `
name: outages
duration: 20m
step: 15s
seed: 5
nodes:
- {name: nuc, cpu: "8", memory: 16Gi, background: {cpu: 400m, memory: 1500Mi}}
- {name: pi-1, cpu: "4", memory: 8Gi, arch: arm64, background: {cpu: 300m, memory: 900Mi}}
- {name: pi-2, cpu: "4", memory: 8Gi, arch: arm64, background: {cpu: 300m, memory: 900Mi}}
- {name: pi-3, cpu: "4", memory: 8Gi, arch: arm64, background: {cpu: 300m, memory: 900Mi}}
- {name: pi-4, cpu: "4", memory: 8Gi, arch: arm64, background: {cpu: 300m, memory: 900Mi}}
workloads:
- name: exporter
  kind: DaemonSet
  requests: {cpu: 50m, memory: 64Mi}
  usage: {cpu: {type: constant, value: 60m}, memory: {type: constant, value: 80Mi}}
- name: web
  replicas: 12
  requests: {cpu: 100m, memory: 128Mi}
  usage: {cpu: {type: noisy, value: 400m, stddev: 80m}, memory: {type: constant, value: 300Mi}}
events:
- {at: 2m, type: reboot, node: pi-2, for: 8m}
- {at: 3m, type: power-loss, node: pi-4}
- {at: 4m, type: drain, node: pi-3}
`

// A node that is down reports nothing: nothing is placed on it and nothing
// is moved off it on its last samples; its pods go when their toleration
// of an unreachable node ends, a drained node keeps only its DaemonSet's
// pod, and a node without power counts in no spread.
func TestOutages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes; run without -short")
	}
	sc, err := scenario.Parse([]byte(outages))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	down := func(node string, at time.Duration) bool {
		switch node {
		case "pi-2":
			return at >= 2*time.Minute && at < 10*time.Minute
		case "pi-4":
			return at >= 3*time.Minute
		}
		return false
	}
	for mode, r := range map[string]*record.Result{"default": c.Default, "ballast": c.Ballast} {
		pods := map[string]int{}
		for _, st := range r.Steps {
			for _, n := range st.Nodes {
				if n.Down != down(n.Node, st.At) {
					t.Errorf("%s: %s at %s: down %t, want %t", mode, n.Node, st.At, n.Down, !n.Down)
				}
				web := n.Workloads["web"]
				if n.Down && web > pods[n.Node] {
					t.Errorf("%s: %s at %s: a web pod was placed on it while it was down", mode, n.Node, st.At)
				}
				if n.Down && st.At >= tolerated(n.Node) && web > 0 {
					t.Errorf("%s: %s at %s: %d web pods still bound past the toleration", mode, n.Node, st.At, web)
				}
				if n.Node == "pi-3" && st.At >= 4*time.Minute && (web > 0 || !n.Cordoned || n.Workloads["exporter"] != 1) {
					t.Errorf("%s: drained pi-3 at %s: %+v, want cordoned with its exporter only", mode, st.At, n)
				}
				pods[n.Node] = web
			}
		}
		if r.Summary.Pending != 0 {
			t.Errorf("%s: %d pods pending at the end", mode, r.Summary.Pending)
		}
		if r.Summary.Hottest == "pi-4" {
			t.Errorf("%s: pi-4, without power, is the hottest node", mode)
		}
		for _, m := range r.Moves {
			if down(m.From, m.At) {
				t.Errorf("%s: moved %s off %s at %s, while it reported nothing", mode, m.Pod, m.From, m.At)
			}
		}
	}
	// pi-2 came back empty of web pods at 10m: balance resumes onto it.
	last := c.Ballast.Steps[len(c.Ballast.Steps)-1]
	for _, n := range last.Nodes {
		if n.Node == "pi-2" && n.Workloads["web"] == 0 {
			t.Errorf("pi-2 came back at 10m and holds no web pod at the end: balance did not resume (%v)", last.Nodes)
		}
	}
}

// tolerated is when the pods on a node that went down at the outages
// scenario's times must be gone: five minutes after.
func tolerated(node string) time.Duration {
	switch node {
	case "pi-2":
		return 2*time.Minute + scenario.PodEvictionTimeout
	case "pi-4":
		return 3*time.Minute + scenario.PodEvictionTimeout
	}
	return 1 << 62
}
