package collector

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ballast-sched/ballast/core/usage"
)

// Round is the statistics published after one sampling round (or after
// deleted nodes were pruned): every node with samples, sorted by name. It
// is flat — one usage.Stats per window and resource of each node in one
// slice, no map per node — and never changes once published, so readers
// share it without locks. Snapshot expands it into a usage.Snapshot on
// demand; the API encodes it directly.
type Round struct {
	*Roster
	windows []usage.Window // in configuration order
	stats   []usage.Stats  // len(names) × len(windows) × len(usage.Resources); Samples 0: none

	nodesOnce sync.Once
	nodes     map[string]usage.NodeUsage // the expanded form, Stale not evaluated; built by the first Snapshot
	evaluated atomic.Pointer[evaluated]
}

// Roster is the part of a Round without statistics: which nodes it holds,
// when each was sampled and whether that changed. It is small (tens of
// bytes per node), so a reader that only needs it need not keep the
// statistics alive.
type Roster struct {
	seq        uint64
	source     string
	staleAfter time.Duration
	names      []string // sorted
	times      []int64  // newest sample of each node, Unix nanoseconds
	versions   []uint64 // seq of the round that last changed each node's statistics
	without    []string // sorted names of nodes without usable samples
}

// evaluated is a snapshot whose Stale flags hold from `from` until `until`.
type evaluated struct {
	snap        *usage.Snapshot
	from, until time.Time
}

// newRound returns a round with room for n nodes; the caller fills names,
// times, versions and stats.
func newRound(seq uint64, source string, windows []usage.Window, staleAfter time.Duration, n int) *Round {
	return &Round{
		Roster: &Roster{seq: seq, source: source, staleAfter: staleAfter,
			times: make([]int64, n), versions: make([]uint64, n)},
		windows: windows,
		stats:   make([]usage.Stats, n*len(windows)*len(usage.Resources)),
	}
}

// RoundOf builds a round from a snapshot, for sources other than a
// Collector (tests, replays): the windows and staleness threshold come
// from cfg, and without lists the nodes that have no samples. Stale flags
// of snap are ignored; they follow from the sample times.
func RoundOf(cfg Config, snap *usage.Snapshot, without []string) *Round {
	cfg.SetDefaults()
	names := make([]string, 0, len(snap.Nodes))
	for name := range snap.Nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	r := newRound(0, snap.Source, cfg.Windows, cfg.StaleAfter, len(names))
	r.names = names
	r.without = slices.Sorted(slices.Values(without))
	for i, name := range names {
		n := snap.Nodes[name]
		r.times[i] = n.SampleTime.UnixNano()
		for wi, w := range r.windows {
			for ri, res := range usage.Resources {
				if st, ok := n.Get(w, res); ok {
					r.stats[r.at(i, wi, ri)] = st
				}
			}
		}
	}
	return r
}

// at is the index in stats of node i, window wi and resource ri.
func (r *Round) at(i, wi, ri int) int {
	return (i*len(r.windows)+wi)*len(usage.Resources) + ri
}

// nodeStats is node i's part of stats.
func (r *Round) nodeStats(i int) []usage.Stats {
	k := len(r.windows) * len(usage.Resources)
	return r.stats[i*k : (i+1)*k]
}

// Seq numbers the rounds of one collector, from 1 upwards.
func (r *Roster) Seq() uint64 { return r.seq }

// Source names the provider the samples came from.
func (r *Roster) Source() string { return r.source }

// Len is the number of nodes with samples.
func (r *Roster) Len() int { return len(r.names) }

// Name returns the name of node i; names are sorted.
func (r *Roster) Name(i int) string { return r.names[i] }

// Find returns the index of the named node, and false when it has no samples.
func (r *Roster) Find(name string) (int, bool) { return slices.BinarySearch(r.names, name) }

// SampleTime returns when node i's newest sample was taken at the source.
func (r *Roster) SampleTime(i int) time.Time { return time.Unix(0, r.times[i]) }

// Stale reports whether node i's newest sample is older than the
// staleness threshold at now.
func (r *Roster) Stale(i int, now time.Time) bool { return isStale(r.SampleTime(i), now, r.staleAfter) }

// isStale is the staleness rule: a sample older than staleAfter is stale.
func isStale(sampleTime, now time.Time, staleAfter time.Duration) bool {
	return now.Sub(sampleTime) > staleAfter
}

// Version returns the Seq of the round that last changed node i's
// statistics: while a node keeps its version, its statistics stay equal.
func (r *Roster) Version(i int) uint64 { return r.versions[i] }

// Stats returns the statistics of node i for resource res over window w,
// and whether any samples exist for them.
func (r *Round) Stats(i int, w usage.Window, res usage.Resource) (usage.Stats, bool) {
	wi, ri := slices.Index(r.windows, w), slices.Index(usage.Resources, res)
	if wi < 0 || ri < 0 {
		return usage.Stats{}, false
	}
	st := r.stats[r.at(i, wi, ri)]
	return st, st.Samples > 0
}

// NodesWithoutSamples lists, sorted, the nodes the provider gave no usable
// sample for. The slice is shared: do not modify it.
func (r *Roster) NodesWithoutSamples() []string { return r.without }

// Snapshot returns the round expanded into a usage.Snapshot with Stale
// evaluated at now. The result is shared between callers until a node
// turns stale: treat it as read-only.
func (r *Round) Snapshot(now time.Time) *usage.Snapshot {
	if e := r.evaluated.Load(); e != nil && !now.Before(e.from) && now.Before(e.until) {
		return e.snap
	}
	r.nodesOnce.Do(r.expand)
	e := evaluate(r.nodes, now, r.staleAfter, r.source)
	r.evaluated.Store(e)
	return e.snap
}

// expand builds the map form of every node, once per round.
func (r *Round) expand() {
	r.nodes = make(map[string]usage.NodeUsage, len(r.names))
	for i, name := range r.names {
		u := usage.NodeUsage{Node: name, SampleTime: r.SampleTime(i),
			Windows: make(map[usage.Window]map[usage.Resource]usage.Stats, len(r.windows))}
		for wi, w := range r.windows {
			byRes := make(map[usage.Resource]usage.Stats, len(usage.Resources))
			for ri, res := range usage.Resources {
				if st := r.stats[r.at(i, wi, ri)]; st.Samples > 0 {
					byRes[res] = st
				}
			}
			u.Windows[w] = byRes
		}
		r.nodes[name] = u
	}
}

// evaluate marks stale nodes and computes how long that marking holds: until
// the first fresh node turns stale.
func evaluate(nodes map[string]usage.NodeUsage, now time.Time, staleAfter time.Duration, source string) *evaluated {
	until := now.Add(100 * 365 * 24 * time.Hour)
	out := make(map[string]usage.NodeUsage, len(nodes))
	for name, n := range nodes {
		n.Stale = isStale(n.SampleTime, now, staleAfter)
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
