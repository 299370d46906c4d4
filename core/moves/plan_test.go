package moves_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/moves"
)

func TestPlansAreTheRecentMovesStillWaitingForTheirReplacement(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	web := moves.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	db := moves.Workload{Namespace: "default", Kind: "StatefulSet", Name: "db"}
	saved := []moves.Saved{
		// 6m before now, validity 5m: expired.
		{Workload: web, Pod: "p0", Source: "a", Destination: "b", At: t0.Add(-6 * time.Minute)},
		// Its replacement already runs: nothing left to plan.
		{Workload: web, Pod: "p1", Source: "a", Destination: "b", At: t0.Add(-2 * time.Minute), LandedOn: "c"},
		{Workload: web, Pod: "p2", Source: "a", Destination: "c", At: t0.Add(-time.Minute)},
		{Workload: web, Pod: "p3", Source: "a", Destination: "d", At: t0},
		{Workload: db, Pod: "p4", Source: "c", Destination: "b", At: t0.Add(-4 * time.Minute)},
	}
	data, err := moves.Encode(saved)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := moves.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[moves.Workload][]moves.Plan{
		web: {{Pod: "p2", Node: "c", At: t0.Add(-time.Minute)}, {Pod: "p3", Node: "d", At: t0}},
		db:  {{Pod: "p4", Node: "b", At: t0.Add(-4 * time.Minute)}},
	}
	if diff := cmp.Diff(want, moves.Plans(decoded, t0, 5*time.Minute)); diff != "" {
		t.Errorf("plans (-want,+got):\n%s", diff)
	}
}

func TestDecodeReadsNothingFromEmptyDataAndFailsOnGarbage(t *testing.T) {
	if got, err := moves.Decode([]byte(" \n")); err != nil || got != nil {
		t.Errorf("Decode(blank) = %v, %v; want nothing", got, err)
	}
	if _, err := moves.Decode([]byte("{moves")); err == nil {
		t.Error("Decode(garbage) succeeded")
	}
}
