// Package registry builds a usage provider from its name, so binaries and
// library users choose a source with a flag. An unknown name is an error,
// never a silent fallback.
package registry

import (
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/rest"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/prometheus"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// Options carries the settings of every provider; each uses its own part.
type Options struct {
	// RestConfig reaches the Kubernetes API (metrics-server).
	RestConfig *rest.Config
	// MetricsServer configures the metrics-server provider; its client is
	// made from RestConfig when nil.
	MetricsServer metricsserver.Config
	// Prometheus configures the prometheus provider.
	Prometheus prometheus.Config
	// Static is the programmable provider to use for "static"; a fresh
	// empty one when nil.
	Static *static.Provider
}

type builder func(Options) (provider.Provider, error)

// builders has one explicit line per provider, keyed by its Name constant.
var builders = map[string]builder{
	metricsserver.Name: newMetricsServer,
	prometheus.Name:    func(o Options) (provider.Provider, error) { return prometheus.New(o.Prometheus) },
	static.Name:        newStatic,
}

// Names lists the known provider names, sorted.
func Names() []string {
	names := make([]string, 0, len(builders))
	for n := range builders {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// New builds the provider called name.
func New(name string, opts Options) (provider.Provider, error) {
	b, ok := builders[name]
	if !ok {
		return nil, field.NotSupported(field.NewPath("provider"), name, Names())
	}
	p, err := b(opts)
	if err != nil {
		return nil, fmt.Errorf("building %s provider: %w", name, err)
	}
	return p, nil
}

func newMetricsServer(o Options) (provider.Provider, error) {
	cfg := o.MetricsServer
	if cfg.Client == nil {
		if o.RestConfig == nil {
			return nil, fmt.Errorf("a Kubernetes client configuration is required")
		}
		c, err := metricsclient.NewForConfig(o.RestConfig)
		if err != nil {
			return nil, fmt.Errorf("creating metrics.k8s.io client: %w", err)
		}
		cfg.Client = c
	}
	return metricsserver.New(cfg)
}

func newStatic(o Options) (provider.Provider, error) {
	if o.Static != nil {
		return o.Static, nil
	}
	return static.New(), nil
}
