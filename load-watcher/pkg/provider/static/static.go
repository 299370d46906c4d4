// Package static is a usage provider programmed from code: tests and demos
// set per-node CPU and memory percentages, and the collector samples them
// like any other source.
package static

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// Name identifies the static provider.
const Name = "static"

var _ provider.Provider = &Provider{}

type reading struct {
	cpu, memory       float64
	hasCPU, hasMemory bool
}

// Provider serves whatever usage was last set for each node. It is safe for
// concurrent use.
type Provider struct {
	mu    sync.Mutex
	now   func() time.Time
	nodes map[string]reading
	err   error
}

// Option adjusts a Provider.
type Option func(*Provider)

// WithClock makes the provider stamp samples with now() instead of the wall
// clock, so tests control sample times.
func WithClock(now func() time.Time) Option {
	return func(p *Provider) { p.now = now }
}

// New returns a provider that knows no nodes yet.
func New(opts ...Option) *Provider {
	p := &Provider{now: time.Now, nodes: map[string]reading{}}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return Name }

// Set makes node report cpu and memory percent from the next sample on.
func (p *Provider) Set(node string, cpu, memory float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nodes[node] = reading{cpu: cpu, memory: memory, hasCPU: true, hasMemory: true}
}

// SetCPU makes node report only CPU usage (memory unknown).
func (p *Provider) SetCPU(node string, cpu float64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nodes[node] = reading{cpu: cpu, hasCPU: true}
}

// Remove makes node report nothing, as if the source lost track of it.
func (p *Provider) Remove(node string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.nodes, node)
}

// SetError makes every following Sample fail with err (nil heals it), to
// simulate an unreachable source.
func (p *Provider) SetError(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.err = err
}

// Nodes lists the nodes that have usage set, so the provider can stand in
// for a cluster's node list in demos without a cluster.
func (p *Provider) Nodes() ([]provider.Node, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]provider.Node, 0, len(p.nodes))
	for name := range p.nodes {
		out = append(out, provider.Node{Name: name})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Sample implements provider.Provider: one sample, stamped now, for every
// requested node that has usage set.
func (p *Provider) Sample(ctx context.Context, nodes []provider.Node) ([]provider.Sample, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return nil, p.err
	}
	now := p.now()
	out := make([]provider.Sample, 0, len(nodes))
	for _, n := range nodes {
		r, ok := p.nodes[n.Name]
		if !ok {
			continue
		}
		out = append(out, provider.Sample{
			Node: n.Name, Time: now,
			CPU: r.cpu, Memory: r.memory,
			HasCPU: r.hasCPU, HasMemory: r.hasMemory,
		})
	}
	return out, nil
}
