package oracle

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

func parse(t *testing.T, doc string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestSolve(t *testing.T) {
	for _, tc := range []struct {
		name string
		doc  string
		// spread and bound, to within 0.01 point; nil bound: none.
		spread, bound float64
		placement     map[string]map[string]int
	}{
		{
			// Two nodes alike, four pods alike: two on each, nothing to
			// spread.
			name: "pods alike on nodes alike",
			doc: `
name: even
duration: 4m
nodes:
- {name: a, cpu: "4", memory: 8Gi}
- {name: b, cpu: "4", memory: 8Gi}
workloads:
- {name: web, replicas: 4, usage: {cpu: {type: constant, value: "1"}, memory: {type: constant, value: 1Gi}}}
`,
			placement: map[string]map[string]int{"a": {"web": 2}, "b": {"web": 2}},
		},
		{
			// A process outside Kubernetes uses a's whole 4 CPU and 2 of its
			// 8 GiB: (100 + 25) / 2 = 62.5 % with no pod on it. b takes the
			// four pods: (4 × 500m = 50 % + 4 × 1Gi = 50 %) / 2 = 50 %. No
			// placement does better: 12.5 points, and the bound says so.
			name: "a process outside Kubernetes sets the spread",
			doc: `
name: hog
duration: 4m
nodes:
- {name: a, cpu: "4", memory: 8Gi}
- {name: b, cpu: "4", memory: 8Gi}
workloads:
- {name: web, replicas: 4, usage: {cpu: {type: constant, value: 500m}, memory: {type: constant, value: 1Gi}}}
events:
- {at: 0s, type: hog, node: a, resources: {cpu: "4", memory: 2Gi}}
`,
			spread: 12.5, bound: 12.5,
			placement: map[string]map[string]int{"b": {"web": 4}},
		},
		{
			// The arm workload may only go to the Pi; requests keep the
			// Pi to two pods of 1 CPU, however idle they are: the third
			// goes to the amd64 node. Spread: Pi (2 × 2.5 % + 2 × 0 %) /
			// 2 … each pod uses 100m of 2 CPU (5 %) and nothing else.
			name: "nodeSelector and requests",
			doc: `
name: constraints
duration: 4m
nodes:
- {name: pi, cpu: "2", memory: 4Gi, arch: arm64}
- {name: big, cpu: "8", memory: 16Gi}
workloads:
- {name: arm, replicas: 2, nodeSelector: {kubernetes.io/arch: arm64}, requests: {cpu: 900m}, usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 0}}}
- {name: any, replicas: 1, requests: {cpu: 900m}, usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 0}}}
`,
			// pi: 2 × 5 % cpu → 5 %; big: 100m of 8 → 1.25 % cpu → 0.625.
			spread: 4.375, bound: 4.375,
			placement: map[string]map[string]int{"pi": {"arm": 2}, "big": {"any": 1}},
		},
		{
			// A cordoned node and one that joins only at the end of the
			// window take no pods; the joiner counts for the one step it
			// is there, with its background.
			name: "cordoned and late nodes take nothing",
			doc: `
name: cordon
duration: 4m
nodes:
- {name: a, cpu: "4", memory: 8Gi}
- {name: b, cpu: "4", memory: 8Gi, unschedulable: true}
- {name: c, cpu: "4", memory: 8Gi, absent: true}
workloads:
- {name: web, replicas: 2, usage: {cpu: {type: constant, value: "1"}, memory: {type: constant, value: 2Gi}}}
events:
- {at: 4m, type: join, node: c}
`,
			// a: (50 + 50) / 2 = 50; b and c: 0.
			spread: 50, bound: 50,
			placement: map[string]map[string]int{"a": {"web": 2}},
		},
		{
			// A DaemonSet's pod stays on a: 1 CPU and 1 GiB there,
			// (25 + 12.5) / 2 = 18.75 % before any web pod. Each web pod
			// adds 12.5 % where it goes: one on a (31.25) and three on b
			// (37.5) spread least, 6.25; two and two, which the same
			// nodes without the DaemonSet would take, spread 18.75. The
			// relaxation splits a pod: 1.25 on a, nothing left to spread.
			name: "a DaemonSet's load stays on its nodes",
			doc: `
name: daemons
duration: 4m
nodes:
- {name: a, cpu: "4", memory: 8Gi, labels: {gpu: "yes"}}
- {name: b, cpu: "4", memory: 8Gi}
workloads:
- {name: agent, kind: DaemonSet, nodeSelector: {gpu: "yes"}, usage: {cpu: {type: constant, value: "1"}, memory: {type: constant, value: 1Gi}}}
- {name: web, replicas: 4, usage: {cpu: {type: constant, value: 500m}, memory: {type: constant, value: 1Gi}}}
`,
			spread: 6.25, bound: 0,
			placement: map[string]map[string]int{"a": {"web": 1}, "b": {"web": 3}},
		},
		{
			// A StatefulSet's replica whose volume lives on a is held
			// there as the DaemonSet above is, with the same figures; the
			// volume on b, of a replica it does not run, holds nothing
			// there. A Job run over before the window adds nothing.
			name: "a StatefulSet's replica stays on its volume's node",
			doc: `
name: stateful
duration: 4m
nodes:
- {name: a, cpu: "4", memory: 8Gi}
- {name: b, cpu: "4", memory: 8Gi}
workloads:
- {name: db, kind: StatefulSet, replicas: 1, volumeNodes: [a, b], usage: {cpu: {type: constant, value: "1"}, memory: {type: constant, value: 1Gi}}}
- {name: web, replicas: 4, usage: {cpu: {type: constant, value: 500m}, memory: {type: constant, value: 1Gi}}}
- {name: scan, kind: Job, runFor: 1m, usage: {cpu: {type: constant, value: "3"}, memory: {type: constant, value: 6Gi}}}
`,
			spread: 6.25, bound: 0,
			placement: map[string]map[string]int{"a": {"web": 1}, "b": {"web": 3}},
		},
		{
			// A CronJob that runs every minute for a minute runs all
			// through the window: its two pods (25 % of a node each) are
			// placed one on each node.
			name: "a CronJob running in the window is placed",
			doc: `
name: cron
duration: 4m
nodes:
- {name: a, cpu: "4", memory: 8Gi}
- {name: b, cpu: "4", memory: 8Gi}
workloads:
- {name: backup, kind: CronJob, schedule: "* * * * *", runFor: 1m, parallelism: 2, usage: {cpu: {type: constant, value: "1"}, memory: {type: constant, value: 2Gi}}}
`,
			spread: 0, bound: 0,
			placement: map[string]map[string]int{"a": {"backup": 1}, "b": {"backup": 1}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Solve(parse(t, tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.placement, r.Placement); diff != "" {
				t.Errorf("placement (-want,+got):\n%s", diff)
			}
			if d := r.Spread - tc.spread; d > 0.01 || d < -0.01 {
				t.Errorf("spread %.3f, want %.3f", r.Spread, tc.spread)
			}
			if r.Bound == nil {
				t.Fatalf("no bound: %s", r.BoundError)
			}
			if d := *r.Bound - tc.bound; d > 0.01 || d < -0.01 {
				t.Errorf("bound %.3f, want %.3f", *r.Bound, tc.bound)
			}
		})
	}
}

// TestShippedScenarios holds the oracle to what it promises on every
// shipped scenario: a placement within the requests and selectors, a bound
// no higher than its spread, and the same answer twice.
func TestShippedScenarios(t *testing.T) {
	for _, name := range scenario.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			sc, err := scenario.Builtin(name)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Solve(sc)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Solve(sc)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(r, again); diff != "" {
				t.Errorf("a second Solve differs (-first,+second):\n%s", diff)
			}
			if r.Bound == nil || *r.Bound > r.Spread+1e-9 {
				t.Errorf("bound %v for a spread of %.2f (%s)", r.Bound, r.Spread, r.BoundError)
			}
			p, err := newProblem(sc)
			if err != nil {
				t.Fatal(err)
			}
			placed := map[string]int{}
			for _, n := range p.nodes {
				var used [3]int64
				for wi, w := range p.workloads {
					c := r.Placement[n.name][w.name]
					if c > 0 && (!n.hostable || len(n.adds[wi]) < c) {
						t.Errorf("%d pods of %s on %s, where at most %d may go", c, w.name, n.name, len(n.adds[wi]))
					}
					for res := range used {
						used[res] += int64(c) * w.requests[res]
					}
					placed[w.name] += c
				}
				for res := range used {
					if used[res] > n.allocatable[res] {
						t.Errorf("%s: requests %v over allocatable %v", n.name, used, n.allocatable)
					}
				}
			}
			for _, w := range p.workloads {
				if placed[w.name] != w.replicas-0 && r.Unplaced == 0 {
					t.Errorf("%s: %d pods placed, want its %d replicas", w.name, placed[w.name], w.replicas)
				}
			}
			t.Logf("window %s–%s: spread %.2f, bound %.2f", r.From, r.To, r.Spread, *r.Bound)
		})
	}
}

// BenchmarkSolveFleet50 is the oracle on the 50-node fleet: building the
// window's problem from the usage model, the search and the bound.
func BenchmarkSolveFleet50(b *testing.B) {
	sc, err := scenario.Builtin("fleet-50")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Solve(sc); err != nil {
			b.Fatal(err)
		}
	}
}
