package server

import (
	"encoding/json"
	"math"
	"testing"
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
