package plugins

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"
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
