package sim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/report"
	"github.com/ballast-sched/ballast/simulator/sim/stack"
)

// peerScenario hogs node-2's CPU before a rollout. Requests say node-2 is
// as empty as node-1.
const peerScenario = `
name: peer
duration: 2m
step: 15s
seed: 4
nodes:
- {name: node-1, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-2, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
workloads:
- name: api
  replicas: 0
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: constant, value: 200m}
    memory: {type: constant, value: 256Mi}
events:
- {at: 0s, type: hog, node: node-2, resources: {cpu: 3500m, memory: 1Gi}}
- {at: 30s, type: scale, workload: api, replicas: 8}
`

// TestRunPeer runs the upstream load-aware peer end to end: the Trimaran
// kube-scheduler binary of `make peers-bins` schedules a served cluster's
// pods while reading the served load-watcher.
func TestRunPeer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane and the peer scheduler; run without -short")
	}
	bin, err := stack.FindPeerScheduler()
	if errors.Is(err, stack.ErrNoPeerScheduler) {
		t.Skipf("%v (the peer scheduler compiles a second Kubernetes line; `make test` does not build it)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Parse([]byte(peerScenario))
	if err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	// Four times PeerSpeed: the test takes a minute, Trimaran polls every
	// two steps.
	r, err := RunPeer(context.Background(), sc, PeerOptions{Scheduler: bin, Speed: 4 * PeerSpeed(sc.Step.Duration), Log: &log})
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log.String())
	}
	t.Logf("placement %s; placed on the hog %d; spread %.1f", report.FinalPlacement(r), r.PlacedOnHog, r.Summary.Spread)
	if r.Mode != ModePeer {
		t.Errorf("mode %q, want %q", r.Mode, ModePeer)
	}
	// Step 0, then a round per step (7.5 s of real time) to the end.
	if n := len(r.Steps); n < 6 || r.Steps[0].At != 0 || r.Steps[n-1].At < sc.Duration.Duration {
		t.Errorf("recorded %d steps from %v to %v, want about 9 from 0s to at least %v", n, r.Steps[0].At, r.Steps[n-1].At, sc.Duration.Duration)
	}
	// Without usage Trimaran scores every node alike and the default
	// topology spreading places 4 and 4.
	if pods := podsPerNode(r.Summary.Final); pods["node-2"] >= pods["node-1"] {
		t.Errorf("the CPU-hogged node-2 got %d pods, node-1 %d: Trimaran did not see the load", pods["node-2"], pods["node-1"])
	}
	if r.Summary.Pending != 0 {
		t.Errorf("%d pods pending at the end: the peer scheduler did not bind them\nlog:\n%s", r.Summary.Pending, log.String())
	}
	for _, bad := range []string{"Load watcher client failed", "Metrics not available from watcher", "Unable to find metrics for node"} {
		if strings.Contains(log.String(), bad) {
			t.Errorf("the peer scheduler could not read load-watcher (%q)\nlog:\n%s", bad, log.String())
		}
	}
}

func TestPeerSpeed(t *testing.T) {
	// 30 s of real time between Trimaran's polls is one 15 s step.
	if got := PeerSpeed(15 * time.Second); got != 0.5 {
		t.Errorf("PeerSpeed(15s) = %g, want 0.5", got)
	}
}
