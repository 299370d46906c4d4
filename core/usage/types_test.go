package usage

import (
	"testing"
	"time"
)

func TestWindowString(t *testing.T) {
	tests := []struct {
		name string
		w    Window
		want string
	}{
		{name: "one minute", w: Window1m, want: "1m"},
		{name: "fifteen minutes", w: Window15m, want: "15m"},
		{name: "ninety seconds", w: Window(90 * time.Second), want: "1m30s"},
		{name: "two hours", w: Window(2 * time.Hour), want: "2h"},
		{name: "thirty seconds", w: Window(30 * time.Second), want: "30s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.w.String(); got != tt.want {
				t.Errorf("Window(%v).String() = %q, want %q", time.Duration(tt.w), got, tt.want)
			}
		})
	}
}

func TestSnapshotNodeSkipsStale(t *testing.T) {
	s := &Snapshot{Nodes: map[string]NodeUsage{
		"fresh": {Node: "fresh"},
		"old":   {Node: "old", Stale: true},
	}}
	if _, ok := s.Node("fresh"); !ok {
		t.Errorf("fresh node: got no usage, want usage")
	}
	if _, ok := s.Node("old"); ok {
		t.Errorf("stale node: got usage, want none")
	}
	if _, ok := s.Node("missing"); ok {
		t.Errorf("missing node: got usage, want none")
	}
	var nilSnap *Snapshot
	if _, ok := nilSnap.Node("fresh"); ok {
		t.Errorf("nil snapshot: got usage, want none")
	}
}
