package app

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/inprocess"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// SourceFactory builds the usage source when the scheduler creates its
// plugins. ctx lives as long as the scheduler; h gives the scheduler's
// Kubernetes client configuration.
type SourceFactory func(ctx context.Context, h fwk.Handle) (nodeload.Source, error)

// usageHub is the process's one usage source, shared by every plugin of
// every profile. It starts lazily, when the first plugin is built, because
// only then are flags parsed and the scheduler's context and client known.
type usageHub struct {
	factory SourceFactory
	once    sync.Once
	source  atomic.Pointer[nodeload.Source]
	// pods tells what running pods use: the source itself when it can,
	// else metrics.k8s.io through the scheduler's API server.
	pods atomic.Pointer[podusage.Source]
	err  error
}

// start builds and starts the source once.
func (u *usageHub) start(ctx context.Context, h fwk.Handle) error {
	u.once.Do(func() {
		src, err := u.factory(ctx, h)
		if err != nil {
			u.err = fmt.Errorf("starting the load-watcher client: %w", err)
			return
		}
		if src != nil {
			u.source.Store(&src)
		}
		pods, ok := src.(podusage.Source)
		if !ok {
			var cfg *rest.Config
			if h != nil {
				cfg = h.KubeConfig()
			}
			if pods, u.err = podusage.ForConfig(cfg); u.err != nil {
				return
			}
		}
		u.pods.Store(&pods)
	})
	return u.err
}

// PodUsage implements podusage.Source: unknown until the hub has started.
func (u *usageHub) PodUsage(ctx context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	if p := u.pods.Load(); p != nil {
		return (*p).PodUsage(ctx, pod)
	}
	return loadmodel.Amount{}, false
}

// Snapshot implements nodeload.Source: nil until the source has started.
func (u *usageHub) Snapshot() *usage.Snapshot {
	if src := u.source.Load(); src != nil {
		return (*src).Snapshot()
	}
	return nil
}

// FlagSource builds the source the flags ask for: load-watcher's HTTP client
// in service mode, its in-process collector (metrics-server) in library mode.
func FlagSource(o *Options) SourceFactory {
	return func(ctx context.Context, h fwk.Handle) (nodeload.Source, error) {
		if err := o.Validate(); err != nil {
			return nil, err
		}
		logger := klog.FromContext(ctx)
		if o.LoadWatcherMode == ModeLibrary {
			c, err := inprocess.New(inprocess.Config{
				RestConfig: h.KubeConfig(),
				StaleAfter: o.StaleAfter,
				Registerer: legacyregistry.Registerer(),
			})
			if err != nil {
				return nil, err
			}
			go func() {
				if err := c.Run(ctx); err != nil && ctx.Err() == nil {
					logger.Error(err, "In-process load-watcher collector stopped")
				}
			}()
			logger.Info("Collecting node usage in-process", "staleAfter", o.StaleAfter)
			return c, nil
		}
		c, err := client.New(client.Config{
			Address: o.LoadWatcherAddress, CAFile: o.LoadWatcherCAFile, StaleAfter: o.StaleAfter,
			NodeExists: nodeExists(h),
		})
		if err != nil {
			return nil, err
		}
		go c.Run(ctx)
		logger.Info("Reading node usage from load-watcher", "address", o.LoadWatcherAddress, "caFile", o.LoadWatcherCAFile, "staleAfter", o.StaleAfter)
		return c, nil
	}
}

// nodeExists asks the scheduler's node informer whether a node load-watcher
// reports is one of the cluster's; until the informer has synced it cannot
// tell and says yes. Nil without an informer factory.
func nodeExists(h fwk.Handle) func(string) bool {
	if h == nil || h.SharedInformerFactory() == nil {
		return nil
	}
	nodes := h.SharedInformerFactory().Core().V1().Nodes()
	informer, lister := nodes.Informer(), nodes.Lister()
	return func(name string) bool {
		if !informer.HasSynced() {
			return true
		}
		_, err := lister.Get(name)
		return !apierrors.IsNotFound(err)
	}
}
