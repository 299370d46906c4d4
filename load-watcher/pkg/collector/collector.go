package collector

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// Collector samples a provider into per-node ring buffers and publishes
// snapshots of windowed statistics. All methods are safe for concurrent use.
type Collector struct {
	cfg      Config
	capacity int // points per node
	gatherer prometheus.Gatherer
	metrics  *metrics

	mu          sync.Mutex // guards the fields below
	series      map[string]*nodeSeries
	noSamples   []string
	joined      bool // a node got its first samples since the last publication
	lastSuccess time.Time
	lastErr     error
	rounds      int
	seq         uint64 // of the last published Round
	scratch     []float64
	sorted      []float64

	// round is the latest published statistics.
	round atomic.Pointer[Round]
	// published is signalled (without blocking) after each publish.
	published chan struct{}
}

// nodeSeries is one node's samples and where its statistics were published.
type nodeSeries struct {
	ring ring
	// version is the seq of the round in which the newest point arrived:
	// the statistics are computed again only in that round.
	version uint64
	// index is the node's position in the latest published Round.
	index int
}

// New validates cfg and returns a Collector that has not sampled yet.
func New(cfg Config) (*Collector, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(field.NewPath("collector")); err != nil {
		return nil, err
	}
	c := &Collector{
		cfg:       cfg,
		capacity:  int(cfg.maxWindow()/cfg.Period) + 2, // +2: timestamp jitter at both ends
		series:    map[string]*nodeSeries{},
		published: make(chan struct{}, 1),
	}
	reg := cfg.Registerer
	if reg == nil {
		r := prometheus.NewRegistry()
		reg, c.gatherer = r, r
	} else if g, ok := reg.(prometheus.Gatherer); ok {
		c.gatherer = g
	}
	m, err := newMetrics(reg, cfg.Provider.Name(), c)
	if err != nil {
		return nil, fmt.Errorf("registering collector metrics: %w", err)
	}
	c.metrics = m
	return c, nil
}

// Gatherer returns the registry holding the collector's metrics, when it
// is one (always when Config.Registerer was nil).
func (c *Collector) Gatherer() prometheus.Gatherer { return c.gatherer }

// Config returns the effective configuration, defaults applied.
func (c *Collector) Config() Config { return c.cfg }

func (c *Collector) now() time.Time { return c.cfg.Now() }

// Run samples until ctx ends: every period, with each round kept just
// behind the moment the source publishes new samples (see pacer). A node
// source that needs starting (an informer) is started and synced first.
func (c *Collector) Run(ctx context.Context) error {
	if s, ok := c.cfg.Nodes.(starter); ok {
		if err := s.Start(ctx); err != nil {
			return err
		}
	}
	var changed <-chan struct{}
	if n, ok := c.cfg.Nodes.(changeNotifier); ok {
		changed = n.Changed()
	}
	pace := newPacer(c.cfg.Period)
	var timer *time.Timer // made with the first wait; reset only once drained
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		fresh, err := c.collect(ctx)
		if err != nil && ctx.Err() == nil {
			klog.ErrorS(err, "Sampling usage failed; keeping the previous samples", "provider", c.cfg.Provider.Name())
		}
		wait := pace.next(time.Now(), fresh > 0, err != nil)
		c.metrics.rounds.WithLabelValues(roundResult(fresh, err)).Inc()
		klog.V(5).InfoS("Sampling round done", "provider", c.cfg.Provider.Name(), "nodesWithNewSamples", fresh, "next", wait)
		if timer == nil {
			timer = time.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		for waiting := true; waiting; {
			select {
			case <-ctx.Done():
				return nil
			case <-timer.C:
				waiting = false
			case <-changed:
				c.Prune()
			}
		}
	}
}

// roundResult is the result label of load_watcher_sampling_rounds_total.
func roundResult(fresh int, err error) string {
	switch {
	case err != nil:
		return roundError
	case fresh > 0:
		return roundNewSamples
	default:
		return roundNothingNew
	}
}

// The results of a sampling round, as load_watcher_sampling_rounds_total
// labels them.
const (
	roundNewSamples = "new_samples"
	roundNothingNew = "nothing_new"
	roundError      = "error"
)

// Collect runs one sampling round: list nodes, ask the provider, store the
// sanitized samples and publish fresh statistics. Samples a partial answer
// did return are kept even when it also reports an error.
func (c *Collector) Collect(ctx context.Context) error {
	_, err := c.collect(ctx)
	return err
}

// collect is Collect that also returns how many nodes got a newer sample.
func (c *Collector) collect(ctx context.Context) (int, error) {
	nodes, err := c.cfg.Nodes.Nodes()
	if err != nil {
		c.recordFailure(err)
		return 0, err
	}
	start := time.Now()
	samples, perr := c.cfg.Provider.Sample(ctx, nodes)
	c.metrics.sampleDuration.Observe(time.Since(start).Seconds())

	c.mu.Lock()
	defer c.mu.Unlock()
	c.rounds++
	byName := index(nodes)
	c.pruneLocked(nodes, byName)
	fresh := c.ingestLocked(nodes, byName, samples)
	c.publishLocked()
	if perr != nil {
		c.lastErr = perr
		c.metrics.providerErrors.Inc()
		return fresh, fmt.Errorf("sampling %s: %w", c.cfg.Provider.Name(), perr)
	}
	c.lastErr = nil
	c.lastSuccess = c.now()
	c.metrics.lastSuccess.Set(unixSeconds(c.lastSuccess))
	return fresh, nil
}

func (c *Collector) recordFailure(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rounds++
	c.lastErr = err
	c.metrics.providerErrors.Inc()
}

// Prune drops the buffers of nodes that no longer exist, at once rather
// than at the next round.
func (c *Collector) Prune() {
	nodes, err := c.cfg.Nodes.Nodes()
	if err != nil {
		klog.ErrorS(err, "Listing nodes to prune failed")
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pruneLocked(nodes, index(nodes)) {
		c.publishLocked()
	}
}

// index maps the names of nodes to their entries.
func index(nodes []provider.Node) map[string]*provider.Node {
	byName := make(map[string]*provider.Node, len(nodes))
	for i := range nodes {
		byName[nodes[i].Name] = &nodes[i]
	}
	return byName
}

// pruneLocked frees buffers of deleted nodes (those not in exists, the
// index of nodes); it reports whether any went.
func (c *Collector) pruneLocked(nodes []provider.Node, exists map[string]*provider.Node) bool {
	if len(c.series) == 0 {
		return false
	}
	pruned := false
	for name := range c.series {
		if _, ok := exists[name]; !ok {
			delete(c.series, name)
			pruned = true
		}
	}
	if pruned {
		c.noSamples = c.noSamplesLocked(nodes)
	}
	return pruned
}

// ingestLocked stores the samples newer than each node's newest and
// returns how many nodes got one.
func (c *Collector) ingestLocked(nodes []provider.Node, byName map[string]*provider.Node, samples []provider.Sample) int {
	now := c.now()
	fresh := 0
	for _, s := range samples {
		n, ok := byName[s.Node]
		if !ok {
			continue // the provider knows a node the cluster does not (any more)
		}
		cpu, memory := math.NaN(), math.NaN()
		unixNano := s.Time.UnixNano()
		if s.Time.IsZero() {
			unixNano = now.UnixNano()
		}
		if s.HasCPU {
			cpu = c.sanitize(usage.CPU, s.CPU, provider.Ceiling(n.Capacity.MilliCPU, n.Allocatable.MilliCPU))
		}
		if s.HasMemory {
			memory = c.sanitize(usage.Memory, s.Memory, provider.Ceiling(n.Capacity.MemoryBytes, n.Allocatable.MemoryBytes))
		}
		if math.IsNaN(cpu) && math.IsNaN(memory) {
			continue
		}
		ns := c.series[s.Node]
		if ns == nil {
			ns = &nodeSeries{ring: newRing(c.capacity), index: -1}
			c.series[s.Node] = ns
			c.joined = true
		}
		if last, ok := ns.ring.newestTime(); ok && unixNano <= last {
			continue // the source has nothing newer (metrics-server resolution > period)
		}
		ns.ring.push(unixNano, float32(cpu), float32(memory))
		ns.version = c.seq + 1 // the round about to be published
		fresh++
	}
	c.noSamples = c.noSamplesLocked(nodes)
	return fresh
}

// sanitize returns the usable value, or NaN when the value is dropped;
// every drop or clamp is counted.
func (c *Collector) sanitize(r usage.Resource, v, ceiling float64) float64 {
	out, verdict, ok := provider.Sanitize(v, ceiling)
	if verdict != provider.Accepted {
		c.metrics.rejected.WithLabelValues(string(r), string(verdict)).Inc()
	}
	if !ok {
		return math.NaN()
	}
	return out
}

// statsLocked computes every window of one node into dst (laid out as in
// Round.stats), anchored at its newest sample so a silent provider leaves
// the last statistics in place.
func (c *Collector) statsLocked(dst []usage.Stats, r *ring) {
	newest, _ := r.newestTime()
	for wi, w := range c.cfg.Windows {
		cutoff := newest - int64(w.Duration())
		for ri, res := range usage.Resources {
			c.scratch = r.since(c.scratch[:0], cutoff, res == usage.CPU)
			var st usage.Stats
			st, c.sorted = summarize(c.scratch, c.sorted)
			dst[wi*len(usage.Resources)+ri] = st
		}
	}
}

func (c *Collector) noSamplesLocked(nodes []provider.Node) []string {
	var out []string
	for _, n := range nodes {
		if _, ok := c.series[n.Name]; !ok {
			out = append(out, n.Name)
		}
	}
	return out
}

// publishLocked publishes a new Round. Only nodes with a new point get
// their statistics computed; the others are copied from the previous round.
func (c *Collector) publishLocked() {
	prev := c.round.Load()
	c.seq++
	r := newRound(c.seq, c.cfg.Provider.Name(), c.cfg.Windows, c.cfg.StaleAfter, len(c.series))
	if prev != nil && !c.joined && len(prev.names) == len(c.series) {
		r.names = prev.names // same nodes: share the sorted names
	} else {
		r.names = make([]string, 0, len(c.series))
		for name := range c.series {
			r.names = append(r.names, name)
		}
		slices.Sort(r.names)
	}
	r.without = slices.Sorted(slices.Values(c.noSamples))
	for i, name := range r.names {
		ns := c.series[name]
		if ns.version == c.seq || ns.index < 0 {
			c.statsLocked(r.nodeStats(i), &ns.ring)
		} else {
			copy(r.nodeStats(i), prev.nodeStats(ns.index))
		}
		r.times[i], _ = ns.ring.newestTime()
		r.versions[i] = ns.version
		ns.index = i
	}
	c.joined = false
	c.round.Store(r)
	select {
	case c.published <- struct{}{}:
	default:
	}
}

// Round returns the latest published statistics; nil before the first
// round produced data. It never blocks on sampling.
func (c *Collector) Round() *Round { return c.round.Load() }

// Snapshot returns the latest statistics with Stale evaluated now; nil
// before the first round produced data. It never blocks on sampling. The
// result is shared between callers: treat it as read-only.
func (c *Collector) Snapshot() *usage.Snapshot {
	r := c.round.Load()
	if r == nil {
		return nil
	}
	return r.Snapshot(c.now())
}

// Published is signalled after new statistics are published, so the API
// can encode them at once. It is meant for one listener; others see the
// change on their next Snapshot call.
func (c *Collector) Published() <-chan struct{} { return c.published }
