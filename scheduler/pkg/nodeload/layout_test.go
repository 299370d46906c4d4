package nodeload

import (
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

const cacheLine = 64

// An entry is a whole number of cache lines, and what Filter reads of it
// with the shipped statistics is in its first line; the variation risk's
// figures and the cause in the first two.
func TestNodeEntryLayout(t *testing.T) {
	var e NodeEntry
	if size := unsafe.Sizeof(e); size%cacheLine != 0 {
		t.Errorf("NodeEntry is %d bytes, not a whole number of %d-byte lines", size, cacheLine)
	}
	end := func(offset, size uintptr) uintptr { return offset + size }
	for _, f := range []struct {
		name  string
		end   uintptr
		lines uintptr
	}{
		{"validUntil", end(unsafe.Offsetof(e.validUntil), unsafe.Sizeof(e.validUntil)), 1},
		{"Pending", end(unsafe.Offsetof(e.Pending), unsafe.Sizeof(e.Pending)), 1},
		{"Fresh", end(unsafe.Offsetof(e.Fresh), unsafe.Sizeof(e.Fresh)), 1},
		{"has", end(unsafe.Offsetof(e.has), unsafe.Sizeof(e.has)), 1},
		{"valid", end(unsafe.Offsetof(e.valid), unsafe.Sizeof(e.valid)), 1},
		{"avg", end(unsafe.Offsetof(e.avg), unsafe.Sizeof(e.avg)), 1},
		{"latest", end(unsafe.Offsetof(e.latest), unsafe.Sizeof(e.latest)), 1},
		{"std", end(unsafe.Offsetof(e.std), unsafe.Sizeof(e.std)), 2},
		{"node", end(unsafe.Offsetof(e.node), unsafe.Sizeof(e.node)), 2},
	} {
		if f.end > f.lines*cacheLine {
			t.Errorf("%s ends at byte %d, past the first %d line(s)", f.name, f.end, f.lines)
		}
	}
}

// StatsAt, Stats, Figure and MeanAndStd give back the statistics fill
// read, field by field.
func TestNodeEntryKeepsTheStatistics(t *testing.T) {
	cpu := usage.Stats{Avg: 41, Std: 7, Max: 88, P95: 70, Latest: 52, Samples: 20}
	mem := usage.Stats{Avg: 63, Std: 2, Max: 71, P95: 69, Latest: 66, Samples: 19}
	snap := &usage.Snapshot{Nodes: map[string]usage.NodeUsage{"n": {
		Node:    "n",
		Windows: map[usage.Window]map[usage.Resource]usage.Stats{usage.Window5m: {usage.CPU: cpu, usage.Memory: mem}},
	}}}
	var e NodeEntry
	e.fill(snap, "n", usage.Window5m)
	for r, want := range map[usage.Resource]usage.Stats{usage.CPU: cpu, usage.Memory: mem} {
		i := ResourceIndex(r)
		got, ok := e.Stats(r)
		if !ok {
			t.Fatalf("%s: no statistics", r)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Stats (-want,+got):\n%s", r, diff)
		}
		if at, _ := e.StatsAt(i); at != got {
			t.Errorf("%s: StatsAt %+v, Stats %+v", r, at, got)
		}
		for _, stat := range []loadmodel.Statistic{loadmodel.Average, loadmodel.Latest, loadmodel.P95, ""} {
			if v, ok := e.Figure(i, stat); !ok || v != stat.Of(want) {
				t.Errorf("%s: Figure(%q) = %v, %v; want %v", r, stat, v, ok, stat.Of(want))
			}
		}
		if avg, std := e.MeanAndStd(i); avg != want.Avg || std != want.Std {
			t.Errorf("%s: MeanAndStd = %v, %v; want %v, %v", r, avg, std, want.Avg, want.Std)
		}
	}
	var missing NodeEntry
	missing.fill(&usage.Snapshot{Nodes: map[string]usage.NodeUsage{"m": {Node: "m"}}}, "m", usage.Window5m)
	if _, ok := missing.Figure(0, loadmodel.Average); ok {
		t.Error("Figure of a window without samples is there")
	}
}
