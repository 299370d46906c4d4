package loadmodel

import (
	"testing"
	"time"
)

func TestUnsampled(t *testing.T) {
	for _, tc := range []struct {
		name            string
		covered, window time.Duration
		want            float64
	}{
		{name: "started after the sample", covered: -time.Minute, window: 5 * time.Minute, want: 1},
		{name: "started at the sample", covered: 0, window: 5 * time.Minute, want: 1},
		// 1 − 1m/5m.
		{name: "a fifth of the window", covered: time.Minute, window: 5 * time.Minute, want: 0.8},
		{name: "the whole window", covered: 5 * time.Minute, window: 5 * time.Minute, want: 0},
		{name: "no window", covered: time.Second, window: 0, want: 0},
	} {
		if got := Unsampled(tc.covered, tc.window); got != tc.want {
			t.Errorf("%s: Unsampled(%s, %s) = %v, want %v", tc.name, tc.covered, tc.window, got, tc.want)
		}
	}
}
