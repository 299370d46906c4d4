// Package plugins registers Ballast's scheduler plugins: the registry that
// ballast-scheduler adds to kube-scheduler's in-tree plugins, and the
// frameworks the start-up check and `ballast explain` build from a
// configuration's profiles with both, as the scheduler does.
package plugins

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadvariationriskbalancing"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/podcountbalance"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/usageawarefit"
)

// Options are how the plugins of a registry track usage.
type Options struct {
	// Now is the clock the usage tracker judges ages by; the real one when
	// nil. A simulation runs the plugins on the simulated time the usage it
	// serves is stamped with.
	Now func() time.Time
	// Registerer is where the tracker's metrics go; none when nil (a
	// scheduler built to check or explain, not to run).
	Registerer prometheus.Registerer
}

// Set is Ballast's plugins and the usage they share.
type Set struct {
	// Registry is the plugins, to be merged with kube-scheduler's in-tree
	// registry.
	Registry frameworkruntime.Registry
	// Usage is the usage they place by: no snapshot until the first plugin
	// that reads usage has been built.
	Usage nodeload.Source
}

// NewRegistry returns the registry of New.
func NewRegistry(source SourceFactory, o Options) frameworkruntime.Registry {
	return New(source, o).Registry
}

// New returns Ballast's plugins. Every plugin of every profile shares one
// usage source, built by source when the first plugin that reads usage is
// built, and one tracker.
func New(source SourceFactory, o Options) Set {
	hub := &usageHub{factory: source}
	tracker := nodeload.NewTracker(hub, nodeload.Options{Registerer: o.Registerer, Now: o.Now})
	withUsage := func(newFactory func(*nodeload.Tracker) frameworkruntime.PluginFactory) frameworkruntime.PluginFactory {
		factory := newFactory(tracker)
		return func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			if err := hub.start(ctx, h); err != nil {
				return nil, err
			}
			return factory(ctx, args, h)
		}
	}
	return Set{Usage: hub, Registry: frameworkruntime.Registry{
		loadaware.Name:                  withUsage(loadaware.NewFactory),
		loadvariationriskbalancing.Name: withUsage(loadvariationriskbalancing.NewFactory),
		usageawarefit.Name:              withUsage(usageawarefit.NewFactory),
		podcountbalance.Name:            podcountbalance.New,
	}}
}
