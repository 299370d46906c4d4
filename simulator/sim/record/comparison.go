package record

import (
	"fmt"
	"math"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/oracle"
)

// Comparison is one scenario run with the default scheduler and with Ballast,
// and optionally with the upstream load-aware peer.
type Comparison struct {
	Scenario    string  `json:"scenario"`
	Description string  `json:"description,omitempty"`
	Seed        int64   `json:"seed"`
	Default     *Result `json:"default"`
	Ballast     *Result `json:"ballast"`
	// Target is what Ballast is expected to achieve; nil for a scenario
	// without one.
	Target *scenario.Target `json:"target,omitempty"`
	// Peer is the upstream load-aware setup's run (RunPeer), when made.
	Peer *Result `json:"peer,omitempty"`
	// Oracle is the best placement possible for the measurement window
	// (oracle.Solve), when found.
	Oracle *oracle.Result `json:"oracle,omitempty"`

	// Configuration is what the Ballast run was configured with.
	Configuration Configuration `json:"configuration"`
}

// SpreadRatio is Ballast's utilisation spread over the default scheduler's;
// below 1 means Ballast balanced better. Zero when the default spread is.
func (c *Comparison) SpreadRatio() float64 {
	if c.Default.Summary.Spread == 0 {
		return 0
	}
	return c.Ballast.Summary.Spread / c.Default.Summary.Spread
}

// BestPeerSpread is the lowest spread Ballast is compared with: the
// default scheduler's, or the upstream peer's when that is lower.
func (c *Comparison) BestPeerSpread() float64 {
	best := c.Default.Summary.Spread
	if c.Peer != nil {
		best = min(best, c.Peer.Summary.Spread)
	}
	return best
}

// BestPeerRatio is Ballast's spread over BestPeerSpread; below 1 means
// Ballast balanced better than every stack it is compared with. Zero when
// the best spread is.
func (c *Comparison) BestPeerRatio() float64 {
	best := c.BestPeerSpread()
	if best == 0 {
		return 0
	}
	return c.Ballast.Summary.Spread / best
}

// EvictionsPerPoint is what r paid in restarts for its balance: its
// evictions over the points of utilisation spread it ended below the
// default scheduler's. moved is false when r evicted nothing; +Inf when it
// evicted pods and ended no lower than the default scheduler.
func (c *Comparison) EvictionsPerPoint(r *Result) (perPoint float64, moved bool) {
	if r == nil || r.Evictions == 0 {
		return 0, false
	}
	removed := c.Default.Summary.Spread - r.Summary.Spread
	if removed <= 0 {
		return math.Inf(1), true
	}
	return float64(r.Evictions) / removed, true
}

// FormatPerPoint is EvictionsPerPoint as the reports print it: "-" for a
// stack that evicted nothing, "∞" for one that removed no spread.
func FormatPerPoint(perPoint float64, moved bool) string {
	switch {
	case !moved:
		return "-"
	case math.IsInf(perPoint, 1):
		return "∞"
	}
	return fmt.Sprintf("%.2f", perPoint)
}
