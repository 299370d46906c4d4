package app

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/tools/events"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	"sigs.k8s.io/descheduler/pkg/descheduler/scheme"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
)

// UsageSource is a snapshot source that starts fetching when the first
// plugin needing it is built, so a policy without Ballast's plugins never
// talks to load-watcher.
type UsageSource interface {
	balance.SnapshotSource
	Start(ctx context.Context)
}

var registerMetrics sync.Once

// pluginMetrics is registered with the descheduler's /metrics once per process.
var pluginMetrics = balance.NewMetrics()

// RegisterPlugins adds Ballast's plugins to registry, reading usage from
// src, predicting the scheduler with model (LoadAware's defaults when nil)
// and keeping their moves in moves, when not nil.
func RegisterPlugins(registry pluginregistry.Registry, src UsageSource, model balance.LoadModel, moves *movesConfigMap) {
	if model == nil {
		model = balance.SchedulerModel{}
	}
	registerMetrics.Do(func() {
		legacyregistry.MustRegister(pluginMetrics.Collectors()...)
		utilruntime.Must(loadawarebalance.AddToScheme(scheme.Scheme))
		utilruntime.Must(spreadreplicas.AddToScheme(scheme.Scheme))
	})
	// One memory for both plugins: neither undoes or repeats the other's
	// moves. One pod usage listing too, sampled in the background.
	trend := &podusage.Trend{}
	listing := &podusage.Listing{Trend: trend}
	deps := balance.Deps{Usage: src, Model: model, Metrics: pluginMetrics, Store: balance.NewStore(),
		PodUsage: listing, Growth: trend}
	var started sync.Once
	start := func(ctx context.Context, handle frameworktypes.Handle) balance.Deps {
		src.Start(ctx)
		started.Do(func() {
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
					deps.Persist = balance.MovesConfigMap{Client: cs, Namespace: moves.namespace, Name: moves.name}
				}
			}
		})
		return deps
	}
	build := func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
		return loadawarebalance.New(ctx, args, handle, start(ctx, handle))
	}
	pluginregistry.Register(loadawarebalance.PluginName, build, &loadawarebalance.LoadAwareBalance{},
		&loadawarebalance.LoadAwareBalanceArgs{}, loadawarebalance.ValidateLoadAwareBalanceArgs,
		loadawarebalance.SetDefaults_LoadAwareBalanceArgs, registry)
	buildSpread := func(ctx context.Context, args runtime.Object, handle frameworktypes.Handle) (frameworktypes.Plugin, error) {
		return spreadreplicas.New(ctx, args, handle, start(ctx, handle))
	}
	pluginregistry.Register(spreadreplicas.PluginName, buildSpread, &spreadreplicas.SpreadReplicas{},
		&spreadreplicas.SpreadReplicasArgs{}, spreadreplicas.ValidateSpreadReplicasArgs,
		spreadreplicas.SetDefaults_SpreadReplicasArgs, registry)
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
