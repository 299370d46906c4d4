package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics/legacyregistry"
	fwk "k8s.io/kube-scheduler/framework"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadvariationriskbalancing"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/podcountbalance"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/usageawarefit"
)

// Plugins returns the registry options that add Ballast's plugins to
// kube-scheduler. Every plugin of every profile shares one usage source,
// built by source when the first plugin is, and one tracker.
func Plugins(source SourceFactory) []schedapp.Option { return PluginsOnClock(source, nil) }

// PluginsOnClock is Plugins with the usage tracker on the clock now (the
// real one when nil): a simulation runs the plugins on the simulated time
// the usage it serves is stamped with.
func PluginsOnClock(source SourceFactory, now func() time.Time) []schedapp.Option {
	return plugins(source, now, legacyregistry.Registerer())
}

// plugins is PluginsOnClock with the tracker's metrics registered with reg
// (none when nil).
func plugins(source SourceFactory, now func() time.Time, reg prometheus.Registerer) []schedapp.Option {
	hub := &usageHub{factory: source}
	tracker := nodeload.NewTracker(hub, nodeload.Options{Registerer: reg, Now: now})
	withUsage := func(newFactory func(*nodeload.Tracker) frameworkruntime.PluginFactory) frameworkruntime.PluginFactory {
		factory := newFactory(tracker)
		return func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			if err := hub.start(ctx, h); err != nil {
				return nil, err
			}
			return factory(ctx, args, h)
		}
	}
	return []schedapp.Option{
		schedapp.WithPlugin(loadaware.Name, withUsage(loadaware.NewFactory)),
		schedapp.WithPlugin(loadvariationriskbalancing.Name, withUsage(loadvariationriskbalancing.NewFactory)),
		schedapp.WithPlugin(usageawarefit.Name, withUsage(usageawarefit.NewFactory)),
		schedapp.WithPlugin(podcountbalance.Name, podcountbalance.New),
	}
}
