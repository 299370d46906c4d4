package integration

import (
	"os"
	"strings"
	"testing"
)

// shippedPolicyPath is Ballast's default policy file.
const shippedPolicyPath = "../../../descheduler/config/policy.yaml"

// shippedPolicy writes the shipped policy with its 5m statistics window
// scaled to the test's: a descheduling cycle runs every few hundred
// milliseconds here, and a 5m window would still hold the samples from
// before earlier moves, which a real 5m cycle never sees.
func shippedPolicy(e *env) string {
	e.t.Helper()
	raw, err := os.ReadFile(shippedPolicyPath)
	if err != nil {
		e.t.Fatal(err)
	}
	scaled := strings.ReplaceAll(string(raw), "window: 5m", "window: "+window.String())
	if scaled == string(raw) {
		e.t.Fatal("the shipped policy sets no 5m window to scale")
	}
	return e.writePolicy(scaled)
}

// Six replicas run on node-a while node-b is cordoned; after the uncordon,
// the shipped policy spreads them 3/3 within a few cycles.
func TestNewNodeGetsReplicasWithShippedPolicy(t *testing.T) {
	e := newEnv(t, nodeSpec("node-a", false), nodeSpec("node-b", true))
	e.replicaSet("web", 6, 100)
	policy := shippedPolicy(e)
	if got := e.podsPerNode()["node-a"]; got != 6 {
		t.Fatalf("%d replicas on node-a, want 6", got)
	}
	// While node-b is cordoned nothing can move: no churn.
	e.cycle(policy, false)
	if got := e.podsPerNode()["node-a"]; got != 6 {
		t.Fatalf("a replica moved while node-b was cordoned: %v", e.podNames())
	}
	e.setUnschedulable("node-b", false)
	for i := 0; i < 4; i++ {
		if p := e.podsPerNode(); p["node-a"] == 3 && p["node-b"] == 3 {
			t.Logf("3/3 after %d cycles", i)
			break
		}
		e.cycle(policy, false)
	}
	if p := e.podsPerNode(); p["node-a"] != 3 || p["node-b"] != 3 {
		t.Fatalf("replicas per node %v after 4 cycles, want 3/3: %v", p, e.podNames())
	}
	// And it stays there.
	e.cycle(policy, false)
	if p := e.podsPerNode(); p["node-a"] != 3 || p["node-b"] != 3 {
		t.Errorf("replicas per node %v one cycle later, want 3/3", p)
	}
}
