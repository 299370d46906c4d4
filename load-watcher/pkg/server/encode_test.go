package server

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

func TestAppendPercent(t *testing.T) {
	tests := []struct {
		v    float64
		want string
	}{
		{v: 0, want: "0"},
		{v: 45, want: "45"},
		{v: 12.5, want: "12.5"},
		{v: 33.333333, want: "33.333"},
		{v: 66.6666, want: "66.667"}, // rounds half away from zero
		{v: 0.0004, want: "0"},
		{v: 0.0005, want: "0.001"},
		{v: 100.05, want: "100.05"},
		{v: -2.25, want: "-2.25"},
		{v: -0.0001, want: "0"},
		{v: 1e16, want: "10000000000000000"},
		{v: math.NaN(), want: "0"},
		{v: math.Inf(-1), want: "0"},
	}
	for _, tt := range tests {
		if got := string(appendPercent(nil, tt.v)); got != tt.want {
			t.Errorf("appendPercent(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

// FuzzAppendString checks the hand-written JSON string encoder against
// encoding/json: the output must decode to the input (invalid UTF-8
// becoming U+FFFD, as encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "node-1", `quo"te`, `back\slash`, "tab\tnew\nline", "\x00\x1f", "ünï", "\xff\xfe", "<&>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendString(nil, s)
		var got string
		if err := json.Unmarshal(enc, &got); err != nil {
			t.Fatalf("appendString(%q) = %s: not a JSON string: %v", s, enc, err)
		}
		ref, _ := json.Marshal(s)
		var want string
		_ = json.Unmarshal(ref, &want)
		if got != want {
			t.Fatalf("appendString(%q) decodes to %q, encoding/json's to %q", s, got, want)
		}
	})
}

func TestFragmentCacheForgetsDeletedNodes(t *testing.T) {
	c := newFragmentCache()
	enc := func(usage.NodeUsage) ([]byte, error) { return []byte("{}"), nil }
	many := map[string]usage.NodeUsage{}
	for i := 0; i < 100; i++ {
		many[fmt.Sprintf("n%d", i)] = usage.NodeUsage{}
	}
	c.refresh(keys(many), many, kindUsage, enc)
	if len(c.m) != 100 {
		t.Fatalf("cache holds %d fragments, want 100", len(c.m))
	}
	// 99 nodes deleted: 100 entries > 8·1+64, so the dead ones go.
	one := map[string]usage.NodeUsage{"n0": {}}
	c.refresh([]string{"n0"}, one, kindUsage, enc)
	if len(c.m) != 1 {
		t.Errorf("after deleting 99 nodes the cache holds %d fragments, want 1", len(c.m))
	}
}

func keys(m map[string]usage.NodeUsage) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
