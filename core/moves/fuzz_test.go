package moves_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/usage"
)

// FuzzDecodeKept reads arbitrary bytes as the moves ConfigMap's content,
// which anyone with access to the ConfigMap may have edited: nothing may
// panic, Decode must say what DecodeKept says of the moves, and what decodes
// must be in UTC, encode again and read back the same, so that a
// descheduler that recalls the moves and keeps them writes what it read,
// and the second writing is byte for byte the first.
func FuzzDecodeKept(f *testing.F) {
	t0 := time.Date(2026, 12, 3, 7, 0, 0, 0, time.UTC)
	web := moves.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	full := moves.Saved{Workload: web, Pod: "p1", Source: "a", Destination: "b", At: t0,
		SourceLoad: moves.Load{usage.CPU: 12.5, usage.Memory: 3}, DestinationLoad: moves.Load{usage.CPU: 25},
		Replacement: "p2", LandedOn: "b", LandedBack: []types.UID{"p3", "p4"}, Hot: true,
		Why: "a over its high thresholds", SourceUsage: moves.Load{usage.Memory: 91.5},
		DestinationUsage: moves.Load{usage.Memory: 40}, SourceAfter: moves.Load{usage.Memory: 80}}
	plan := &moves.Rebalance{ID: "7", Made: t0, Spread: 31.5, Best: 4, After: 5, Checked: t0.Add(time.Minute), Now: 20, NowBest: 4,
		Nodes: []string{"a", "b"}, Target: []moves.Placed{{Node: "a", Workload: web, Pods: 2}, {Node: "b", Workload: web, Pods: 2}},
		Moves: []moves.Step{{Workload: web, From: "a", To: "b"}}, Done: 1, Finished: t0.Add(time.Hour), Ended: "the cluster changed"}
	encoded := func(k moves.Kept) []byte {
		data, err := moves.EncodeKept(k)
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	withPlan := encoded(moves.Kept{Moves: []moves.Saved{full, {Workload: web, Source: "b", Destination: "c", At: t0.Add(time.Second), Pull: true}}, Plan: plan})
	f.Add(withPlan)
	f.Add(encoded(moves.Kept{Moves: []moves.Saved{full}}))
	f.Add(encoded(moves.Kept{Plan: plan}))
	// As many moves as the descheduler keeps (its maxKeptMoves): the
	// largest content it writes, some hundreds of KiB.
	many := make([]moves.Saved, 1000)
	for i := range many {
		many[i] = full
		many[i].Pod = types.UID(fmt.Sprintf("pod-%d", i))
		many[i].At = t0.Add(time.Duration(i) * time.Minute)
	}
	f.Add(encoded(moves.Kept{Moves: many}))
	f.Add(withPlan[:len(withPlan)/2])
	f.Add([]byte(""))
	f.Add([]byte(" \n\t"))
	f.Add([]byte("null"))
	f.Add([]byte(`{"moves":[],"plan":null}`))
	f.Add([]byte(`{"moves":[{"workload":{},"at":"0000-01-01T00:00:00Z","sourceLoad":{},"landedBack":[]}],"plan":{"nodes":[],"target":[]}}`))
	f.Add([]byte(`{"moves":[{"at":"9999-12-31T23:59:59.999999999+23:59","sourceLoad":{"cpu":1e308,"":-0}}]}`))
	f.Add([]byte(`{"moves":[{"at":"10000-01-01T00:00:00Z"}]}`))
	// Times Go's decoder reads and its encoder refuses to write: an offset
	// of 24 hours, and years outside 0–9999 once in UTC.
	f.Add([]byte(`{"moves":[{"at":"2026-01-01T00:00:00+24:00"}]}`))
	f.Add([]byte(`{"moves":[{"at":"2026-01-01T00:00:00-23:60"}]}`))
	f.Add([]byte(`{"moves":[{"at":"0000-01-01T00:00:00+01:00"}]}`))
	f.Add([]byte(`{"plan":{"finished":"9999-12-31T23:59:59-01:00"}}`))
	f.Add([]byte(`{"moves":[{"sourceLoad":{"cpu":1e400}}]}`))
	f.Add([]byte(`{"MOVES":[{"Workload":{"namespace":"a"},"pod":"\ud800","pod":"x"}],"plan":{"done":-1}}`))
	f.Add([]byte(`{"moves":{"a":1}}`))
	f.Add([]byte(strings.Repeat("[", 20000)))
	f.Add([]byte("moves:\n- source: a\n"))
	f.Add([]byte{0xff, 0xfe, '{', '}'})

	// An empty slice or map reads back as none: the encoding omits both.
	equal := cmpopts.EquateEmpty()
	f.Fuzz(func(t *testing.T, data []byte) {
		kept, err := moves.DecodeKept(data)
		saved, savedErr := moves.Decode(data)
		if (err == nil) != (savedErr == nil) {
			t.Fatalf("DecodeKept says %v, Decode %v", err, savedErr)
		}
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			if kept.Plan != nil || len(kept.Moves) > 0 {
				t.Fatalf("kept %+v with error %v", kept, err)
			}
			return
		}
		for i, m := range kept.Moves {
			inUTC(t, fmt.Sprintf("moves[%d].at", i), m.At)
		}
		if p := kept.Plan; p != nil {
			inUTC(t, "plan.made", p.Made)
			inUTC(t, "plan.checked", p.Checked)
			inUTC(t, "plan.finished", p.Finished)
		}
		if diff := cmp.Diff(kept.Moves, saved, equal); diff != "" {
			t.Fatalf("Decode differs from DecodeKept's moves (-DecodeKept,+Decode):\n%s", diff)
		}
		if len(bytes.TrimSpace(data)) == 0 && (kept.Plan != nil || kept.Moves != nil) {
			t.Fatalf("empty data read as %+v", kept)
		}
		again, err := moves.EncodeKept(kept)
		if err != nil {
			t.Fatalf("what decodes does not encode: %v", err)
		}
		if (again == nil) != (len(kept.Moves) == 0 && kept.Plan == nil) {
			t.Fatalf("%+v encodes as %q: want nothing exactly when it holds nothing", kept, again)
		}
		back, err := moves.DecodeKept(again)
		if err != nil {
			t.Fatalf("what was encoded from decoded data does not decode: %v\n%s", err, again)
		}
		if diff := cmp.Diff(kept, back, equal); diff != "" {
			t.Fatalf("round trip changed what was kept (-decoded,+encoded and decoded again):\n%s", diff)
		}
		if third, err := moves.EncodeKept(back); err != nil || !bytes.Equal(third, again) {
			t.Fatalf("encoding again: %v\n%s\nwant\n%s", err, third, again)
		}
	})
}

// inUTC fails t unless at is in UTC within the years the format writes.
func inUTC(t *testing.T, field string, at time.Time) {
	t.Helper()
	if at.Location() != time.UTC || at.Year() < 0 || at.Year() > 9999 {
		t.Fatalf("%s read as %v: want a time in UTC within 0–9999", field, at)
	}
}
