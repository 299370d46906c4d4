package plugins

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/load-watcher/pkg/inprocess"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/options"
)

// FlagSource builds the source the flags ask for: load-watcher's HTTP client
// in service mode, its in-process collector (metrics-server) in library mode.
func FlagSource(o *options.Options) SourceFactory {
	return func(ctx context.Context, h fwk.Handle) (nodeload.Source, error) {
		if err := o.Validate(); err != nil {
			return nil, err
		}
		logger := klog.FromContext(ctx)
		if o.LoadWatcherMode == options.ModeLibrary {
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
