package model

import (
	"math"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

const usageScenario = `
name: arithmetic
duration: 10m
nodes:
- {name: n1, cpu: "4", memory: 8Gi, background: {cpu: 500m, memory: 1Gi}}
- {name: n2, cpu: "4", memory: 8Gi}
workloads:
- name: steady
  replicas: 1
  usage:
    cpu: {type: constant, value: 250m}
    memory: {type: constant, value: 256Mi}
- name: noisy
  replicas: 1
  usage:
    cpu: {type: noisy, value: "1", stddev: 100m}
    memory: {type: constant, value: 0}
events:
- {at: 2m, type: hog, node: n1, resources: {cpu: "1", memory: 2Gi}, for: 3m}
`

func TestNodeUsageArithmetic(t *testing.T) {
	sc, err := scenario.Parse([]byte(usageScenario))
	if err != nil {
		t.Fatal(err)
	}
	m := NewUsageModel(sc)
	const gi, mi = 1 << 30, 1 << 20
	for _, tc := range []struct {
		name string
		node string
		pods map[string]int
		at   time.Duration
		want Amount
	}{
		// 500m background + 3×250m; 1Gi + 3×256Mi.
		{"background plus pods", "n1", map[string]int{"steady": 3}, time.Minute, Amount{CPU: 1.25, Memory: gi + 768*mi}},
		// the hog adds 1 core and 2Gi while it runs (2m–5m).
		{"hog running", "n1", map[string]int{"steady": 1}, 3 * time.Minute, Amount{CPU: 1.75, Memory: 3*gi + 256*mi}},
		{"hog over", "n1", map[string]int{"steady": 1}, 5 * time.Minute, Amount{CPU: 0.75, Memory: gi + 256*mi}},
		{"empty node", "n2", nil, time.Minute, Amount{}},
		{"unknown workload ignored", "n2", map[string]int{"gone": 2}, time.Minute, Amount{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := m.NodeUsage(tc.node, tc.pods, tc.at, int64(tc.at/(15*time.Second)))
			if math.Abs(got.CPU-tc.want.CPU) > 1e-9 || math.Abs(got.Memory-tc.want.Memory) > 1 {
				t.Errorf("NodeUsage = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNodeUsageNoiseIsReproducibleAndPerPod(t *testing.T) {
	sc, err := scenario.Parse([]byte(usageScenario))
	if err != nil {
		t.Fatal(err)
	}
	m := NewUsageModel(sc)
	a := m.NodeUsage("n2", map[string]int{"noisy": 2}, time.Minute, 4)
	b := m.NodeUsage("n2", map[string]int{"noisy": 2}, time.Minute, 4)
	if a != b {
		t.Fatalf("same seed, node, workload and step gave %+v then %+v", a, b)
	}
	if a.CPU == 2 {
		t.Errorf("two noisy pods used exactly their mean (2 cores): noise is not applied")
	}
	if other := m.NodeUsage("n2", map[string]int{"noisy": 2}, time.Minute, 5); other == a {
		t.Errorf("step 4 and step 5 drew the same noise %+v", a)
	}
	one := m.NodeUsage("n2", map[string]int{"noisy": 1}, time.Minute, 4)
	if one.CPU == a.CPU/2 {
		t.Errorf("the second pod drew the same noise as the first")
	}
}

// TestPodsUsageDoesNotDependOnNames serves the same pods under other names:
// each pod's usage must stay the same, the pods of a workload on a node must
// add up to the node's share of NodeUsage, and a pod from elsewhere uses its
// requests.
func TestPodsUsageDoesNotDependOnNames(t *testing.T) {
	sc, err := scenario.Parse([]byte(usageScenario))
	if err != nil {
		t.Fatal(err)
	}
	m := NewUsageModel(sc)
	const step = 4
	at := step * 15 * time.Second
	pods := func(names ...string) map[types.UID]Pod {
		out := map[types.UID]Pod{}
		for _, name := range names {
			out[types.UID(name)] = Pod{Workload: "noisy", Node: "n2", Key: types.NamespacedName{Namespace: "default", Name: name}}
		}
		out["other"] = Pod{Workload: "not-in-the-scenario", Node: "n2", Requests: Amount{CPU: 0.1, Memory: 1 << 20},
			Key: types.NamespacedName{Namespace: "kube-system", Name: "other"}}
		return out
	}
	first := m.PodsUsage(pods("noisy-aaaaa", "noisy-zzzzz", "noisy-mmmmm"), at, step)
	second := m.PodsUsage(pods("noisy-bbbbb", "noisy-00000", "noisy-yyyyy"), at, step)
	var sum Amount
	var seen []Amount
	for _, u := range []map[types.NamespacedName]Amount{first, second} {
		for k, a := range u {
			if k.Name == "other" {
				if a != (Amount{CPU: 0.1, Memory: 1 << 20}) {
					t.Errorf("a pod from elsewhere used %+v, want its requests", a)
				}
				continue
			}
			seen = append(seen, a)
		}
	}
	for _, a := range seen[1:] {
		if a != seen[0] {
			t.Fatalf("pods of one workload on one node used %+v and %+v: a pod's usage follows its name", seen[0], a)
		}
	}
	for k, a := range first {
		if k.Name != "other" {
			sum = sum.Add(a)
		}
	}
	want := m.NodeUsage("n2", map[string]int{"noisy": 3}, at, step)
	if math.Abs(sum.CPU-want.CPU) > 1e-9 || math.Abs(sum.Memory-want.Memory) > 1 {
		t.Errorf("the pods used %+v together, the node's usage has %+v of them", sum, want)
	}
	if seen[0].CPU == 1 {
		t.Errorf("each noisy pod used exactly its profile's value: noise is not applied")
	}
}
