package prometheus

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// Name identifies the Prometheus provider.
const Name = "prometheus"

var _ provider.Provider = &Provider{}

// Provider samples node usage with PromQL instant queries.
type Provider struct {
	api     promv1.API
	timeout time.Duration
	// roundTimeout bounds a whole round: twice timeout, one query per
	// resource. Auto detection's extra queries share it.
	roundTimeout time.Duration
	// candidates are the query sets tried per resource, in order; more
	// than one only for QuerySetAuto.
	candidates []Queries
	// custom are the user's own queries (cpuQuery, memoryQuery), whose
	// answers are checked to be fractions.
	custom map[string]bool

	mu sync.Mutex
	// chosen remembers, per resource, which candidate answered last time,
	// so auto detection costs one query per resource in steady state.
	chosen map[resourceKind]int
}

type resourceKind int

const (
	cpuKind resourceKind = iota
	memoryKind
)

func (k resourceKind) String() string {
	if k == cpuKind {
		return "cpu"
	}
	return "memory"
}

func (q Queries) of(k resourceKind) string {
	if k == cpuKind {
		return q.CPU
	}
	return q.Memory
}

// New validates cfg and returns a Prometheus provider.
func New(cfg Config) (*Provider, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(field.NewPath("prometheus")); err != nil {
		return nil, err
	}
	hc, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	client, err := api.NewClient(api.Config{Address: cfg.Address, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("creating Prometheus client for %s: %w", cfg.Address, err)
	}
	return &Provider{
		api:          promv1.NewAPI(client),
		timeout:      cfg.Timeout,
		roundTimeout: 2 * cfg.Timeout,
		candidates:   candidates(cfg),
		custom:       map[string]bool{cfg.CPUQuery: cfg.CPUQuery != "", cfg.MemoryQuery: cfg.MemoryQuery != ""},
		chosen:       map[resourceKind]int{},
	}, nil
}

// candidates lists the queries to try, with per-resource overrides applied.
func candidates(cfg Config) []Queries {
	sets := []QuerySet{cfg.QuerySet}
	if cfg.QuerySet == QuerySetAuto {
		sets = autoOrder
	}
	out := make([]Queries, 0, len(sets))
	for _, s := range sets {
		q := DefaultQueries[s]
		if cfg.CPUQuery != "" {
			q.CPU = cfg.CPUQuery
		}
		if cfg.MemoryQuery != "" {
			q.Memory = cfg.MemoryQuery
		}
		out = append(out, q)
	}
	return out
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return Name }

// Sample implements provider.Provider. A failing resource query does not
// discard the other resource: the answer is partial and the error says why.
// Each query ends after the timeout, and the round as a whole after twice
// the timeout, however many queries auto detection has left to try: a
// Prometheus that stalls fails the round instead of holding it.
func (p *Provider) Sample(ctx context.Context, nodes []provider.Node) ([]provider.Sample, error) {
	roundErr := fmt.Errorf("the sampling round's deadline (%s, twice the query timeout) passed: %w", p.roundTimeout, context.DeadlineExceeded)
	round, cancel := context.WithTimeoutCause(ctx, p.roundTimeout, roundErr)
	defer cancel()
	idx := newNodeIndex(nodes)
	byNode := make(map[string]*provider.Sample, len(nodes))
	var errs []error
	for _, kind := range []resourceKind{cpuKind, memoryKind} {
		if round.Err() != nil {
			errs = append(errs, fmt.Errorf("%s query not sent", kind))
			continue
		}
		points, err := p.query(round, kind, idx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for name, pt := range points {
			s := byNode[name]
			if s == nil {
				s = &provider.Sample{Node: name}
				byNode[name] = s
			}
			if pt.time.After(s.Time) {
				s.Time = pt.time
			}
			n := idx.byName[name]
			if kind == cpuKind {
				s.CPU, s.HasCPU = toPercent(pt.value, n.Capacity.MilliCPU, n.Allocatable.MilliCPU), true
			} else {
				s.Memory, s.HasMemory = toPercent(pt.value, n.Capacity.MemoryBytes, n.Allocatable.MemoryBytes), true
			}
		}
	}
	if err := errors.Join(errs...); err != nil && round.Err() != nil && ctx.Err() == nil && !errors.Is(err, roundErr) {
		// Say why, once, when the queries' errors do not.
		errs = append([]error{roundErr}, errs...)
	}
	out := make([]provider.Sample, 0, len(byNode))
	for _, n := range nodes {
		if s, ok := byNode[n.Name]; ok {
			out = append(out, *s)
		}
	}
	return out, errors.Join(errs...)
}

// toPercent converts a fraction of the machine into percent of allocatable.
func toPercent(ratio float64, capacity, allocatable int64) float64 {
	if capacity > 0 && allocatable > 0 {
		return 100 * ratio * float64(capacity) / float64(allocatable)
	}
	return 100 * ratio
}

// query runs the resource's query, trying the candidate sets in order and
// starting with the one that answered last time. An empty answer from one
// set moves on to the next; only a query error is an error.
func (p *Provider) query(ctx context.Context, kind resourceKind, idx nodeIndex) (map[string]point, error) {
	p.mu.Lock()
	start := p.chosen[kind]
	p.mu.Unlock()
	var lastErr error
	for i := range p.candidates {
		if i > 0 && ctx.Err() != nil {
			break // the round's deadline passed: the next set would fail at once
		}
		c := (start + i) % len(p.candidates)
		q := p.candidates[c].of(kind)
		points, err := p.run(ctx, q, idx)
		if err != nil {
			lastErr = fmt.Errorf("%s query %q: %w", kind, q, err)
			continue
		}
		if len(points) == 0 && i < len(p.candidates)-1 {
			continue
		}
		p.mu.Lock()
		p.chosen[kind] = c
		p.mu.Unlock()
		return points, nil
	}
	return nil, lastErr
}

func (p *Provider) run(ctx context.Context, query string, idx nodeIndex) (map[string]point, error) {
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	value, warnings, err := p.api.Query(ctx, query, time.Now())
	if err != nil {
		return nil, err
	}
	if len(warnings) > 0 {
		klog.V(2).InfoS("Prometheus query returned warnings", "query", query, "warnings", warnings)
	}
	points, unmapped, err := parseVector(value, idx)
	if unmapped > 0 {
		klog.V(2).InfoS("Prometheus series matched no node", "query", query, "series", unmapped)
	}
	if err == nil && p.custom[query] {
		err = checkFractions(points)
	}
	return points, err
}

// checkFractions refuses an answer in which every node is above 1: the query
// returns percent, not the fraction (0-1) of the machine it must return.
// Read as fractions such numbers put every node far over its thresholds, so
// every pod would be filtered; refused, the resource counts as missing and
// placement falls back to requests.
func checkFractions(points map[string]point) error {
	if len(points) == 0 {
		return nil
	}
	var example string
	var value float64
	for name, pt := range points {
		if pt.value <= 1 {
			return nil
		}
		if example == "" || name < example {
			example, value = name, pt.value
		}
	}
	return fmt.Errorf("every value is above 1 (node %s: %g): the query must return the used fraction (0-1) of each "+
		"node, not percent; divide it by 100", example, value)
}

// point is one node's value from one query.
type point struct {
	value float64
	time  time.Time
}

// parseVector maps an instant-query result to nodes. Several series for one
// node (e.g. two scrape jobs) keep the highest value, the cautious choice
// for placement. NaN survives here; the collector drops and counts it.
func parseVector(v model.Value, idx nodeIndex) (points map[string]point, unmapped int, err error) {
	vec, ok := v.(model.Vector)
	if !ok {
		if v == nil {
			return nil, 0, errors.New("empty result")
		}
		return nil, 0, fmt.Errorf("want an instant vector, got %s", v.Type())
	}
	points = make(map[string]point, len(vec))
	for _, s := range vec {
		if s == nil {
			continue
		}
		n, ok := idx.lookup(s.Metric)
		if !ok {
			unmapped++
			continue
		}
		val := float64(s.Value)
		if old, seen := points[n.Name]; seen && !(val > old.value) && !math.IsNaN(old.value) {
			continue
		}
		points[n.Name] = point{value: val, time: s.Timestamp.Time()}
	}
	return points, unmapped, nil
}
