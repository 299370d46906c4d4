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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// Name identifies the metrics-server provider.
const Name = "metrics-server"

var _ provider.Provider = &Provider{}

// Config configures the metrics-server provider.
type Config struct {
	// Client talks to the metrics.k8s.io API.
	Client metricsclient.Interface
}

// Provider samples NodeMetrics.
type Provider struct {
	client metricsclient.Interface
}

// New returns a metrics-server provider.
func New(cfg Config) (*Provider, error) {
	if cfg.Client == nil {
		return nil, errors.New("metrics-server provider: a metrics.k8s.io client is required")
	}
	return &Provider{client: cfg.Client}, nil
}

// Name implements provider.Provider.
func (p *Provider) Name() string { return Name }

// Sample implements provider.Provider with one List of all NodeMetrics.
func (p *Provider) Sample(ctx context.Context, nodes []provider.Node) ([]provider.Sample, error) {
	list, err := p.client.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
	if err != nil {
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
