package app

import (
	"context"
	"fmt"
	"sync"

	"github.com/ballast-sched/ballast/descheduler/pkg/schedulerfit"

	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/options"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// usageSource is a snapshot source that starts fetching when the first
// plugin needing it is built, so a policy without Ballast's plugins never
// talks to load-watcher.
type usageSource interface {
	balance.SnapshotSource
	Start(ctx context.Context)
}

// registerMetrics registers the plugins' metrics with the descheduler's
// /metrics, once per process.
var registerMetrics sync.Once

// pluginMetrics are the plugins' metrics, one set per process.
var pluginMetrics = balance.NewMetrics()

// processDeps are what Ballast's plugins share in the descheduler's process:
// usage from src, the scheduler predicted by model, one memory of moves for
// both plugins (kept in the moves ConfigMap when not nil), one pod usage
// listing sampled in the background, and the descheduler's events. They are
// made when the first plugin is built, from its context and handle.
func processDeps(src usageSource, model balance.LoadModel, moves *options.ConfigMapRef, schedulerConfig, schedulerProfile string) plugins.DepsFunc {
	registerMetrics.Do(func() { legacyregistry.MustRegister(pluginMetrics.Collectors()...) })
	trend := &podusage.Trend{}
	listing := &podusage.Listing{Trend: trend}
	deps := balance.Deps{Usage: src, Model: model, Metrics: pluginMetrics, Store: balance.NewStore(), PodUsage: listing, Growth: trend}
	var started sync.Once
	var err error
	return func(ctx context.Context, handle frameworktypes.Handle) (balance.Deps, error) {
		src.Start(ctx)
		started.Do(func() {
			// The scheduler's own filters judge every destination; they
			// register their informers now, before the descheduler
			// starts its factory.
			if cs, factory := handle.ClientSet(), handle.SharedInformerFactory(); cs != nil && factory != nil {
				var fit *schedulerfit.Fit
				if fit, err = schedulerfit.New(ctx, schedulerConfig, schedulerProfile, cs, factory); err != nil {
					err = fmt.Errorf("--scheduler-config %q, profile %q: %w", schedulerConfig, schedulerProfile, err)
					return
				}
				deps.Fit = fit.Fits
			}
			if r, ok := model.(interface{ Run(context.Context) }); ok {
				go r.Run(ctx)
			}
			if cs := handle.ClientSet(); cs != nil {
				listing.Client = cs.CoreV1().RESTClient()
				go listing.Run(ctx, balance.PodSamplePeriod)
				broadcaster := events.NewEventBroadcasterAdapter(cs)
				broadcaster.StartRecordingToSink(ctx.Done())
				deps.Events = broadcaster.NewRecorder(component)
				if moves != nil {
					deps.Persist = balance.NewMovesConfigMap(cs, moves.Namespace, moves.Name)
				}
			}
		})
		return deps, err
	}
}

// lazyClient is the load-watcher HTTP client, refreshed in the background
// from the first Start on.
type lazyClient struct {
	client *client.Client
	once   sync.Once
}

// Start fetches once before returning, so that the first cycle, the only
// one of a run with --descheduling-interval=0, already has usage, then keeps
// refreshing in the background until ctx ends.
func (l *lazyClient) Start(ctx context.Context) {
	l.once.Do(func() {
		if err := l.client.Refresh(ctx); err != nil {
			klog.FromContext(ctx).Info("No usage from load-watcher yet; LoadAwareBalance evicts nothing until it answers", "err", err.Error())
		}
		go l.client.Run(ctx)
	})
}

func (l *lazyClient) Snapshot() *usage.Snapshot { return l.client.Snapshot() }
