// Package metricsserver reads node usage from the resource metrics API
// (metrics.k8s.io/v1beta1 NodeMetrics, served by metrics-server, which k3s
// ships).
//
// Usage is divided by the node's allocatable, not its capacity: allocatable
// is what the scheduler hands out to pods (capacity minus system and kubelet
// reservations and the eviction threshold), so "85 %" means the same thing
// to the scheduler's thresholds as to its request accounting. The price is
// that a node running system daemons in its reserved share can read slightly
// above 100 %; the collector allows up to capacity ÷ allocatable.
package metricsserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// Name identifies the metrics-server provider.
const Name = "metrics-server"

var _ provider.Provider = &Provider{}

// DefaultTimeout bounds a sampling round: one List of NodeMetrics, which
// the API server passes on to metrics-server and which takes milliseconds
// when both are well.
const DefaultTimeout = 10 * time.Second

// Config configures the metrics-server provider.
type Config struct {
	// Client talks to the metrics.k8s.io API.
	Client metricsclient.Interface
	// Timeout bounds each sampling round; defaults to DefaultTimeout.
	Timeout time.Duration
}

// SetDefaults fills unset fields.
func (c *Config) SetDefaults() {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
}

// Validate reports every invalid field at once. The client is checked by
// New, which is given one.
func (c *Config) Validate(path *field.Path) error {
	var errs field.ErrorList
	if c.Timeout <= 0 {
		errs = append(errs, field.Invalid(path.Child("timeout"), c.Timeout.String(), "must be positive"))
	}
	return errs.ToAggregate()
}

// Provider samples NodeMetrics.
type Provider struct {
	client  metricsclient.Interface
	timeout time.Duration
}

// New validates cfg and returns a metrics-server provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Client == nil {
		return nil, errors.New("metrics-server provider: a metrics.k8s.io client is required")
	}
	cfg.SetDefaults()
	if err := cfg.Validate(field.NewPath("metricsServer")); err != nil {
		return nil, err
	}
	return &Provider{client: cfg.Client, timeout: cfg.Timeout}, nil
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return Name }

// Sample implements provider.Provider with one List of all NodeMetrics,
// which ends after the timeout: a metrics API that stalls fails the round
// instead of holding it.
func (p *Provider) Sample(ctx context.Context, nodes []provider.Node) ([]provider.Sample, error) {
	roundErr := fmt.Errorf("the sampling round's deadline (%s) passed: %w", p.timeout, context.DeadlineExceeded)
	round, cancel := context.WithTimeoutCause(ctx, p.timeout, roundErr)
	defer cancel()
	list, err := p.client.MetricsV1beta1().NodeMetricses().List(round, metav1.ListOptions{})
	if err != nil {
		if round.Err() != nil && ctx.Err() == nil && !errors.Is(err, roundErr) {
			err = fmt.Errorf("%w: %w", roundErr, err)
		}
		return nil, fmt.Errorf("listing NodeMetrics: %w", err)
	}
	return Samples(list.Items, nodes), nil
}

// Samples turns NodeMetrics into samples for the given nodes, in percent of
// allocatable. Metrics of unknown nodes are ignored, and a resource whose
// allocatable is unknown is left out rather than guessed.
func Samples(items []metricsv1beta1.NodeMetrics, nodes []provider.Node) []provider.Sample {
	byName := make(map[string]*metricsv1beta1.NodeMetrics, len(items))
	for i := range items {
		byName[items[i].Name] = &items[i]
	}
	out := make([]provider.Sample, 0, len(items))
	for _, n := range nodes {
		m, ok := byName[n.Name]
		if !ok {
			continue
		}
		s := provider.Sample{Node: n.Name, Time: m.Timestamp.Time}
		if q, ok := m.Usage[corev1.ResourceCPU]; ok && n.Allocatable.MilliCPU > 0 {
			s.CPU = 100 * float64(q.MilliValue()) / float64(n.Allocatable.MilliCPU)
			s.HasCPU = true
		}
		if q, ok := m.Usage[corev1.ResourceMemory]; ok && n.Allocatable.MemoryBytes > 0 {
			s.Memory = 100 * q.AsApproximateFloat64() / float64(n.Allocatable.MemoryBytes)
			s.HasMemory = true
		}
		if s.HasCPU || s.HasMemory {
			out = append(out, s)
		}
	}
	return out
}
