package collector

import (
	"sync/atomic"
	"time"

	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

// published is one round's statistics plus a cached staleness evaluation.
type published struct {
	nodes     map[string]usage.NodeUsage
	evaluated atomic.Pointer[evaluated]
}

// evaluated is a snapshot whose Stale flags hold from `from` until `until`.
type evaluated struct {
	snap        *usage.Snapshot
	from, until time.Time
}

// Snapshot returns the latest statistics with Stale evaluated now; nil
// before the first round produced data. It never blocks on sampling. The
// result is shared between callers: treat it as read-only.
func (c *Collector) Snapshot() *usage.Snapshot {
	p := c.base.Load()
	if p == nil {
		return nil
	}
	now := c.now()
	if e := p.evaluated.Load(); e != nil && !now.Before(e.from) && now.Before(e.until) {
		return e.snap
	}
	e := evaluate(p.nodes, now, c.cfg.StaleAfter, c.cfg.Provider.Name())
	p.evaluated.Store(e)
	return e.snap
}

// evaluate marks stale nodes and computes how long that marking holds: until
// the first fresh node turns stale.
func evaluate(nodes map[string]usage.NodeUsage, now time.Time, staleAfter time.Duration, source string) *evaluated {
	until := now.Add(100 * 365 * 24 * time.Hour)
	out := make(map[string]usage.NodeUsage, len(nodes))
	for name, n := range nodes {
		n.Stale = now.Sub(n.SampleTime) > staleAfter
		// Fresh until its age exceeds staleAfter, one nanosecond past this.
		if turns := n.SampleTime.Add(staleAfter + time.Nanosecond); !n.Stale && turns.Before(until) {
			until = turns
		}
		out[name] = n
	}
	return &evaluated{
		snap:  &usage.Snapshot{Time: now, Source: source, Nodes: out},
		from:  now,
		until: until,
	}
}
