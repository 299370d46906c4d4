package record

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// TestRecorderObserve shows the recorder a sequence of placements and
// checks what it counts after each.
func TestRecorderObserve(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
name: record
duration: 20m
step: 15s
nodes:
- {name: node-1, cpu: "4", memory: 8Gi}
- {name: node-2, cpu: "4", memory: 8Gi}
workloads:
- {name: web, replicas: 2, requests: {cpu: 100m}, usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 64Mi}}}
events:
- {at: 1m, type: hog, node: node-2, resources: {cpu: "2"}}
- {at: 12m, type: scale, workload: web, replicas: 2}
`))
	if err != nil {
		t.Fatal(err)
	}
	pod := func(node string) model.Pod { return model.Pod{Workload: "web", Node: node} }
	type counts struct{ Evictions, PingPong, Loops, ReMoves, PlacedOnHog int }
	r := NewRecorder(model.NewUsageModel(sc), sc, model.ModeDefault, Thresholds{CPU: 85, Memory: 90})
	for _, tc := range []struct {
		name     string
		pods     map[types.UID]model.Pod
		at       time.Duration
		evicting bool
		// explain is what the descheduler said of its moves.
		explain map[types.UID]string
		want    counts
	}{
		{name: "pending pods count for nothing", pods: map[types.UID]model.Pod{"a": pod(""), "b": pod("")}},
		// Before the hog starts.
		{name: "bound before the hog", at: 30 * time.Second, pods: map[types.UID]model.Pod{"a": pod("node-1"), "b": pod("node-2")}},
		{name: "a new pod on the hog", at: 2 * time.Minute, pods: map[types.UID]model.Pod{"a": pod("node-1"), "b": pod("node-2"), "c": pod("node-2")},
			want: counts{PlacedOnHog: 1}},
		{name: "a scale-down is no eviction", at: 2 * time.Minute, pods: map[types.UID]model.Pod{"a": pod("node-1"), "b": pod("node-2")},
			want: counts{PlacedOnHog: 1}},
		{name: "an eviction", at: 5 * time.Minute, evicting: true, pods: map[types.UID]model.Pod{"a": pod("node-1")},
			explain: map[types.UID]string{"b": "Moved off node-2 by LoadAwareBalance: cpu 95.0% over its high threshold 80.0%", "x": "another"},
			want:    counts{Evictions: 1, PlacedOnHog: 1}},
		// d replaces b: node-1 received a moved web pod.
		{name: "the replacement lands", at: 5*time.Minute + 15*time.Second, pods: map[types.UID]model.Pod{"a": pod("node-1"), "d": pod("node-1")},
			want: counts{Evictions: 1, PlacedOnHog: 1}},
		// Nothing changed between the move onto node-1 and this one off it.
		{name: "evicting from the node that received a move with nothing changed is a loop", at: 10 * time.Minute, evicting: true,
			pods: map[types.UID]model.Pod{"d": pod("node-1")}, want: counts{Evictions: 2, PingPong: 1, Loops: 1, PlacedOnHog: 1}},
		{name: "the next replacement lands on node-1 again", at: 10*time.Minute + 15*time.Second,
			pods: map[types.UID]model.Pod{"d": pod("node-1"), "e": pod("node-1")}, want: counts{Evictions: 2, PingPong: 1, Loops: 1, PlacedOnHog: 1}},
		// The workload was scaled at 12m, after that move: a re-move.
		{name: "a move off it after the cluster changed is a re-move", at: 15 * time.Minute, evicting: true,
			pods: map[types.UID]model.Pod{"d": pod("node-1")}, want: counts{Evictions: 3, PingPong: 2, Loops: 1, ReMoves: 1, PlacedOnHog: 1}},
	} {
		r.Explain(tc.explain)
		r.Observe(tc.pods, tc.at, tc.evicting)
		got := counts{r.result.Evictions, r.result.PingPong, r.result.Loops, r.result.ReMoves, r.result.PlacedOnHog}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("after %q (-want,+got):\n%s", tc.name, diff)
		}
	}
	// Each move, where its replacement landed, and which undid an
	// earlier one.
	wantMoves := []Move{
		{At: 5 * time.Minute, Workload: "web", From: "node-2", To: "node-1", Why: "Moved off node-2 by LoadAwareBalance: cpu 95.0% over its high threshold 80.0%"},
		{At: 10 * time.Minute, Workload: "web", From: "node-1", To: "node-1", Undid: MoveLoop},
		{At: 15 * time.Minute, Workload: "web", From: "node-1", Undid: MoveReMove},
	}
	if diff := cmp.Diff(wantMoves, r.result.Moves, cmpopts.IgnoreFields(Move{}, "Pod")); diff != "" {
		t.Errorf("moves (-want,+got):\n%s", diff)
	}
	if got, want := r.result.Moves[0].Reason(), "cpu 95.0% over its high threshold 80.0%"; got != want {
		t.Errorf("reason of the first move = %q, want %q", got, want)
	}
	if got := r.result.Moves[1].Reason(); got != "-" {
		t.Errorf("reason of a move the descheduler said nothing of = %q, want -", got)
	}
}

// A move keeps the node the descheduler planned for its replacement, and a
// replacement counts for the move of its workload planned on the node it
// landed on: two pods moved at once to node-2 and node-3 whose replacements
// land on node-3 and node-1 are one move as planned and one elsewhere.
func TestRecorderCountsMovesLandedAsPlanned(t *testing.T) {
	sc, err := scenario.Parse([]byte(`
name: planned
duration: 10m
step: 15s
nodes:
- {name: node-1, cpu: "4", memory: 8Gi}
- {name: node-2, cpu: "4", memory: 8Gi}
- {name: node-3, cpu: "4", memory: 8Gi}
workloads:
- {name: web, replicas: 3, requests: {cpu: 100m}, usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 64Mi}}}
`))
	if err != nil {
		t.Fatal(err)
	}
	pod := func(name, node string) model.Pod {
		return model.Pod{Workload: "web", Node: node, Key: types.NamespacedName{Namespace: "default", Name: name}}
	}
	a, b, c := pod("web-a", "node-1"), pod("web-b", "node-1"), pod("web-c", "node-1")
	r := NewRecorder(model.NewUsageModel(sc), sc, model.ModeBallast, Thresholds{CPU: 85, Memory: 90})
	r.Observe(map[types.UID]model.Pod{"a": a, "b": b, "c": c}, 0, false)
	r.Plan(map[types.UID]string{"a": "node-2", "b": "node-3"})
	r.Observe(map[types.UID]model.Pod{"c": c}, 5*time.Minute, true)
	r.Observe(map[types.UID]model.Pod{"c": c, "d": pod("web-d", "node-3"), "e": pod("web-e", "node-1")}, 5*time.Minute+15*time.Second, false)
	res := r.Finish()
	want := []Move{
		{At: 5 * time.Minute, Workload: "web", From: "node-1", Planned: "node-2", To: "node-1"},
		{At: 5 * time.Minute, Workload: "web", From: "node-1", Planned: "node-3", To: "node-3"},
	}
	if diff := cmp.Diff(want, res.Moves, cmpopts.IgnoreFields(Move{}, "Pod")); diff != "" {
		t.Errorf("moves (-want,+got):\n%s", diff)
	}
	if share, ok := res.AsPlannedShare(); res.Landed != 2 || res.AsPlanned != 1 || !ok || share != 50 {
		t.Errorf("landed %d, as planned %d (%v%%, %t); want 2, 1 (50%%)", res.Landed, res.AsPlanned, share, ok)
	}
}
