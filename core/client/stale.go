package client

import (
	"sync"
	"time"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
)

// staleCache holds the last received usage and hands out snapshots whose
// Stale flags are right at call time, re-evaluating only when some node
// has crossed the threshold since the last evaluation.
type staleCache struct {
	staleAfter time.Duration
	now        func() time.Time

	mu sync.Mutex
	// nodes hold the usage with SampleTime from the server; localSample is
	// each node's sample time on the local clock (receipt minus age).
	nodes       map[string]usage.NodeUsage
	localSample map[string]time.Time
	time        time.Time
	source      string
	snap        *usage.Snapshot
	validUntil  time.Time
}

// store keeps list as received at receivedAt; invalid maps nodes whose data
// was refused to why: they are stale whatever their age.
func (c *staleCache) store(list *apiv1.UsageList, invalid map[string]string, receivedAt time.Time) {
	nodes := make(map[string]usage.NodeUsage, len(list.Nodes))
	local := make(map[string]time.Time, len(list.Nodes))
	for name, n := range list.Nodes {
		u := usage.NodeUsage{Node: name, SampleTime: n.SampleTime, Invalid: invalid[name], Windows: make(map[usage.Window]map[usage.Resource]usage.Stats, len(n.Windows))}
		for ws, byRes := range n.Windows {
			w, err := apiv1.ParseWindow(ws)
			if err != nil {
				continue // a window we cannot name is useless to callers
			}
			u.Windows[w] = byRes
		}
		nodes[name] = u
		local[name] = receivedAt.Add(-time.Duration(n.SampleAgeSeconds * float64(time.Second)))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodes, c.localSample, c.time, c.source = nodes, local, list.Time, list.Source
	c.snap, c.validUntil = nil, time.Time{}
}

func (c *staleCache) snapshot() *usage.Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.nodes == nil {
		return nil
	}
	now := c.now()
	if c.snap != nil && now.Before(c.validUntil) && !now.Before(c.snap.Time) {
		return c.snap
	}
	until := now.Add(100 * 365 * 24 * time.Hour)
	out := make(map[string]usage.NodeUsage, len(c.nodes))
	for name, n := range c.nodes {
		sampled := c.localSample[name]
		n.Stale = n.Invalid != "" || now.Sub(sampled) > c.staleAfter
		if turns := sampled.Add(c.staleAfter + time.Nanosecond); !n.Stale && turns.Before(until) {
			until = turns
		}
		out[name] = n
	}
	c.snap = &usage.Snapshot{Time: now, Source: c.source, Nodes: out}
	c.validUntil = until
	return c.snap
}
