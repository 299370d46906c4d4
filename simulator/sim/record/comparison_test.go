package record

import "testing"

func TestBestPeer(t *testing.T) {
	spread := func(v float64) *Result { return &Result{Summary: Summary{Spread: v}} }
	for _, tc := range []struct {
		name            string
		c               *Comparison
		best, bestRatio float64
	}{
		{"no peer run", &Comparison{Default: spread(40), Ballast: spread(10)}, 40, 0.25},
		// min(40, 20) = 20; 10 / 20.
		{"peer better than default", &Comparison{Default: spread(40), Peer: spread(20), Ballast: spread(10)}, 20, 0.5},
		{"peer worse than default", &Comparison{Default: spread(40), Peer: spread(50), Ballast: spread(10)}, 40, 0.25},
		{"best spread zero", &Comparison{Default: spread(40), Peer: spread(0), Ballast: spread(10)}, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.BestPeerSpread(); got != tc.best {
				t.Errorf("BestPeerSpread() = %g, want %g", got, tc.best)
			}
			if got := tc.c.BestPeerRatio(); got != tc.bestRatio {
				t.Errorf("BestPeerRatio() = %g, want %g", got, tc.bestRatio)
			}
		})
	}
}

func TestEvictionsPerPoint(t *testing.T) {
	run := func(spread float64, evictions int) *Result {
		return &Result{Evictions: evictions, Summary: Summary{Spread: spread}}
	}
	c := &Comparison{Default: run(40, 0)}
	for _, tc := range []struct {
		name  string
		r     *Result
		moved bool
		want  string
	}{
		// 8 evictions for 40 − 24 = 16 points.
		{"balance bought", run(24, 8), true, "0.50"},
		{"nothing evicted", run(24, 0), false, "-"},
		{"evicted and removed nothing", run(41, 3), true, "∞"},
		{"no run", nil, false, "-"},
	} {
		v, moved := c.EvictionsPerPoint(tc.r)
		if moved != tc.moved || FormatPerPoint(v, moved) != tc.want {
			t.Errorf("%s: EvictionsPerPoint = %v, %v (%q), want moved %v, %q", tc.name, v, moved, FormatPerPoint(v, moved), tc.moved, tc.want)
		}
	}
}
