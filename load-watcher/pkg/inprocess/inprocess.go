// Package inprocess is load-watcher in library mode: the collector runs
// inside the caller's process, without an HTTP server, and hands out
// snapshots as client.Client does (Snapshot, with Stale judged against the
// caller's threshold). It lives apart from package client so that a program
// that only reads a load-watcher server does not link the collector and its
// providers.
package inprocess

import (
	"context"
	"fmt"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	prometheusprovider "github.com/ballast-sched/ballast/load-watcher/pkg/provider/prometheus"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/registry"
)

// Config configures library mode.
type Config struct {
	// Provider names the usage source ("metrics-server", "prometheus");
	// defaults to metrics-server.
	Provider string
	// RestConfig reaches the cluster: the Node informer and metrics-server. Required
	// unless both Nodes and a ready Source are given.
	RestConfig *rest.Config
	// MetricsServer configures the metrics-server provider; its client is
	// made from RestConfig when nil.
	MetricsServer metricsserver.Config
	// Prometheus configures the prometheus provider.
	Prometheus prometheusprovider.Config
	// Source replaces the provider built from Provider (e.g. static.New()).
	Source provider.Provider
	// Nodes replaces the Node informer (e.g. collector.StaticNodes).
	Nodes collector.NodeSource
	// Period, Windows: see collector.Config.
	Period  time.Duration
	Windows []usage.Window
	// StaleAfter is the caller's staleness threshold; defaults to
	// client.DefaultStaleAfter.
	StaleAfter time.Duration
	// Registerer receives the collector's metrics; a private registry when
	// nil. Two InProcess values must not share one Registerer.
	Registerer prom.Registerer
}

// Client runs the collector inside the caller's process. Each Client owns
// its informer, provider and metrics, so several can live in one process.
type Client struct {
	*collector.Collector
}

// New builds the collector; call Run to start sampling.
func New(cfg Config) (*Client, error) {
	if cfg.Provider == "" {
		cfg.Provider = "metrics-server"
	}
	if cfg.StaleAfter == 0 {
		cfg.StaleAfter = client.DefaultStaleAfter
	}
	src := cfg.Source
	if src == nil {
		var err error
		src, err = registry.New(cfg.Provider, registry.Options{RestConfig: cfg.RestConfig, MetricsServer: cfg.MetricsServer, Prometheus: cfg.Prometheus})
		if err != nil {
			return nil, err
		}
	}
	nodes := cfg.Nodes
	if nodes == nil {
		if cfg.RestConfig == nil {
			return nil, fmt.Errorf("library mode: a Kubernetes client configuration is required to watch nodes")
		}
		cs, err := kubernetes.NewForConfig(cfg.RestConfig)
		if err != nil {
			return nil, fmt.Errorf("creating Kubernetes client: %w", err)
		}
		nodes = collector.NewInformerNodes(cs)
	}
	c, err := collector.New(collector.Config{
		Provider:   src,
		Nodes:      nodes,
		Period:     cfg.Period,
		Windows:    cfg.Windows,
		StaleAfter: cfg.StaleAfter,
		Registerer: cfg.Registerer,
	})
	if err != nil {
		return nil, err
	}
	return &Client{Collector: c}, nil
}

// Run samples until ctx ends; see collector.Collector.Run.
func (p *Client) Run(ctx context.Context) error { return p.Collector.Run(ctx) }
