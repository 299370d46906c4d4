package integration

import (
	"os"
	"slices"
	"testing"

	"sigs.k8s.io/yaml"
)

// shippedPolicyPath is Ballast's default policy file.
const shippedPolicyPath = "../../../descheduler/config/policy.yaml"

// shippedPolicy writes the shipped policy with the statistics window of
// Ballast's plugins (by default 5m) set to the test's: a descheduling cycle
// runs every few hundred milliseconds here, and a 5m window would still
// hold the samples from before earlier moves, which a real 5m cycle never
// sees.
func shippedPolicy(e *env) string {
	e.t.Helper()
	raw, err := os.ReadFile(shippedPolicyPath)
	if err != nil {
		e.t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		e.t.Fatal(err)
	}
	scaled := 0
	for _, p := range doc["profiles"].([]any) {
		profile := p.(map[string]any)
		entries, _ := profile["pluginConfig"].([]any)
		for _, name := range []string{"LoadAwareBalance", "SpreadReplicas"} {
			i := slices.IndexFunc(entries, func(e any) bool { return e.(map[string]any)["name"] == name })
			if i < 0 {
				entries = append(entries, map[string]any{"name": name})
				i = len(entries) - 1
			}
			entry := entries[i].(map[string]any)
			args, _ := entry["args"].(map[string]any)
			if args == nil {
				args = map[string]any{}
				entry["args"] = args
			}
			args["window"] = window.String()
			scaled++
		}
		profile["pluginConfig"] = entries
	}
	if scaled == 0 {
		e.t.Fatal("the shipped policy has no profile to scale")
	}
	out, err := yaml.Marshal(doc)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.writePolicy(string(out))
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
