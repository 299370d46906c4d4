package balance_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/usage"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"
)

// moveKey is what names a move: two kept moves with the same key are one.
type moveKey struct {
	w      balance.Workload
	pod    types.UID
	source string
	at     time.Time
}

// FuzzDecodeMoves reads arbitrary bytes as the moves ConfigMap's content,
// which anyone with access to it may have edited, the ways Ballast reads
// it: DecodeMoves and DecodePlan (`ballast explain`, the simulator) and a
// descheduler's Recall. Nothing may panic; what fails to decode fails as
// core/moves says; DecodeMoves gives each move kept, once, oldest first,
// in a form explain can print as JSON; and a descheduler that recalls the
// content and keeps it writes what a second one recalls and keeps byte for
// byte, so that two restarts do not rewrite the ConfigMap for nothing.
func FuzzDecodeMoves(f *testing.F) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	web := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	s := balance.NewStore()
	s.Lock()
	s.RememberCooling(web, "web-1", "a", "b", t0, balance.NodeLoad{usage.Memory: 5}, balance.NodeLoad{usage.Memory: 4})
	s.Note("web-1", "memory over its high threshold", balance.NodeLoad{usage.Memory: 93}, balance.NodeLoad{usage.Memory: 40})
	s.RememberPull(web, "web-3", "c", "d", t0.Add(time.Minute), balance.NodeLoad{usage.CPU: 2}, nil)
	landed := balancetest.Pod("web-2", "c", "web", 40)
	landed.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	landed.UID = "web-2"
	s.Follow([]string{"a", "b", "c"}, func(node string) []*v1.Pod {
		if node == "c" {
			return []*v1.Pod{landed}
		}
		return nil
	})
	s.SetCool(map[string]balance.NodeLoad{"a": {usage.Memory: 87}}, nil, nil)
	kept, err := balance.EncodeMovesForTest(s)
	s.Unlock()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(kept)
	f.Add(kept[:len(kept)/2])
	plan := &moves.Rebalance{ID: "3", Made: t0, Checked: t0, Spread: 30, Best: 2, After: 4,
		Moves: []moves.Step{{Workload: web, From: "a", To: "b"}}}
	withPlan, err := moves.EncodeKept(moves.Kept{Plan: plan, Moves: []moves.Saved{
		// The same move twice, the second knowing more; an older move
		// after a newer one; one instant in two zones.
		{Workload: web, Pod: "p1", Source: "a", Destination: "b", At: t0.Add(time.Hour)},
		{Workload: web, Pod: "p1", Source: "a", Destination: "b", At: t0.Add(time.Hour), Replacement: "p2", LandedOn: "c",
			Why: "why", SourceUsage: moves.Load{usage.CPU: 90}, SourceLoad: moves.Load{usage.CPU: 10}, LandedBack: []types.UID{"p9"}},
		{Workload: web, Pod: "p0", Source: "b", Destination: "a", At: t0},
		{Workload: web, Pod: "p0", Source: "b", Destination: "a", At: t0.In(time.FixedZone("X", 3600))},
	}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(withPlan)
	// More moves than a descheduler keeps: it writes the newest 1000.
	var many strings.Builder
	many.WriteString(`{"moves":[`)
	for i := range 1200 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `{"workload":{"Namespace":"default","Kind":"ReplicaSet","Name":"web"},"pod":"p%d","source":"a","destination":"b","at":%q}`,
			i, t0.Add(time.Duration(1200-i)*time.Second).Format(time.RFC3339))
	}
	many.WriteString(`]}`)
	f.Add([]byte(many.String()))
	// Figures no descheduler writes, at the edges of float64.
	f.Add([]byte(`{"moves":[{"source":"a","at":"2026-01-01T00:00:00Z","sourceUsage":{"cpu":1.7e308},"sourceLoad":{"cpu":-1.7e308},` +
		`"destinationUsage":{"memory":-1.7e308},"destinationLoad":{"memory":-1.7e308}}]}`))
	f.Add([]byte(`{"moves":[{"sourceUsage":{"cpu":5e-324},"sourceAfter":{},"landedBack":[]}],"plan":null}`))
	f.Add([]byte(""))
	f.Add([]byte("null"))
	// Times Go reads and will not write: in an offset of 24 hours, and in
	// year 0 an hour east of UTC, which UTC puts in year -1.
	f.Add([]byte(`{"moves":[{"at":"2026-01-01T00:00:00+24:00"}]}`))
	f.Add([]byte(`{"moves":[{"source":"a","at":"0000-01-01T00:00:00+01:00"}]}`))
	f.Add([]byte(strings.Repeat(`{"moves":[`, 5000)))

	f.Fuzz(func(t *testing.T, data []byte) {
		k, keptErr := moves.DecodeKept(data)
		ms, err := balance.DecodeMoves(data)
		plan, planErr := balance.DecodePlan(data)
		if fmt.Sprint(err) != fmt.Sprint(keptErr) || fmt.Sprint(planErr) != fmt.Sprint(keptErr) {
			t.Fatalf("core/moves says %v, DecodeMoves %v, DecodePlan %v", keptErr, err, planErr)
		}
		if keptErr != nil {
			if ms != nil || plan != nil {
				t.Fatalf("moves %v and plan %v with error %v", ms, plan, err)
			}
			return
		}
		if diff := cmp.Diff(k.Plan, plan); diff != "" {
			t.Fatalf("DecodePlan differs from the plan kept (-kept,+DecodePlan):\n%s", diff)
		}
		want := map[moveKey]bool{}
		for _, m := range k.Moves {
			want[moveKey{m.Workload, m.Pod, m.Source, m.At.UTC()}] = true
		}
		if len(ms) != len(want) {
			t.Fatalf("%d moves from %d kept, %d of them distinct", len(ms), len(k.Moves), len(want))
		}
		for i, m := range ms {
			key := moveKey{m.Workload, m.Pod, m.Source, m.At.UTC()}
			if !want[key] {
				t.Fatalf("move %d %+v was not kept, or given twice", i, key)
			}
			delete(want, key)
			if i > 0 && m.At.Before(ms[i-1].At) {
				t.Fatalf("move %d at %v before move %d at %v", i, m.At, i-1, ms[i-1].At)
			}
		}
		if _, err := json.Marshal(ms); err != nil {
			t.Fatalf("explain cannot print the moves: %v", err)
		}

		first := balance.NewStore()
		if _, err := balance.MergeMovesForTest(first, data); err != nil {
			t.Fatalf("recalling what decodes: %v", err)
		}
		if added, err := balance.MergeMovesForTest(first, data); err != nil || added != 0 {
			t.Fatalf("recalling the same content twice added %d moves (%v)", added, err)
		}
		written, err := balance.EncodeMovesForTest(first)
		if err != nil {
			t.Fatalf("keeping what was recalled: %v", err)
		}
		second := balance.NewStore()
		if _, err := balance.MergeMovesForTest(second, written); err != nil {
			t.Fatalf("recalling what a descheduler kept: %v\n%s", err, written)
		}
		again, err := balance.EncodeMovesForTest(second)
		if err != nil {
			t.Fatalf("keeping it again: %v", err)
		}
		if !bytes.Equal(written, again) {
			t.Fatalf("a second descheduler keeps\n%s\nwhere the first kept\n%s", again, written)
		}
	})
}
