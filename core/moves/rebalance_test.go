package moves_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/moves"
)

// The descheduler's plan is kept beside its moves and read back whole; the
// moves alone read as before, and data written before plans were kept
// reads as moves without a plan.
func TestThePlanIsKeptWithTheMoves(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	web := moves.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	kept := moves.Kept{
		Moves: []moves.Saved{{Workload: web, Pod: "p1", Source: "a", Destination: "b", At: t0}},
		Plan: &moves.Rebalance{ID: "2026-12-03T07:00:00Z", Made: t0, Spread: 31.5, Best: 4, After: 5, Checked: t0, Now: 31.5, NowBest: 4,
			Nodes: []string{"a", "b"}, Target: []moves.Placed{{Node: "a", Workload: web, Pods: 2}, {Node: "b", Workload: web, Pods: 2}},
			Moves: []moves.Step{{Workload: web, From: "a", To: "b"}}, Done: 1},
	}
	data, err := moves.EncodeKept(kept)
	if err != nil {
		t.Fatal(err)
	}
	got, err := moves.DecodeKept(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(kept, got); diff != "" {
		t.Errorf("kept (-want,+got):\n%s", diff)
	}
	if ms, err := moves.Decode(data); err != nil || len(ms) != 1 {
		t.Errorf("Decode = %v, %v; want the one move", ms, err)
	}
	old, err := moves.Encode(kept.Moves)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := moves.DecodeKept(old); err != nil || got.Plan != nil || len(got.Moves) != 1 {
		t.Errorf("DecodeKept(moves only) = %+v, %v", got, err)
	}
	if data, err := moves.EncodeKept(moves.Kept{}); err != nil || data != nil {
		t.Errorf("EncodeKept(nothing) = %q, %v; want nothing", data, err)
	}
}
