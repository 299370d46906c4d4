package leaderrelease

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// predecessorWait bounds the read of the lease while the scheduler is set up:
// its health endpoint serves only once set-up is done, and the chart's
// liveness probe first asks 15 s after the start.
const predecessorWait = 10 * time.Second

// OnFirstPlugin wraps every factory of r so that the first plugin built
// starts a releaser of the lease namespace/name. Plugins are built with the
// scheduler, before it waits for the lease, so every replica watches for a
// crashed leader, the standby included.
func OnFirstPlugin(r frameworkruntime.Registry, namespace, name string) {
	var once sync.Once
	var err error
	for plugin, factory := range r {
		r[plugin] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			once.Do(func() { err = startReleaser(ctx, h, namespace, name) })
			if err != nil {
				return nil, err
			}
			return factory(ctx, args, h)
		}
	}
}

// startReleaser runs a releaser of the lease for as long as ctx, the
// scheduler's, lives.
func startReleaser(ctx context.Context, h fwk.Handle, namespace, name string) error {
	if h == nil || h.ClientSet() == nil || h.SharedInformerFactory() == nil {
		return fmt.Errorf("--leader-lease needs the scheduler's client and informers")
	}
	// kube-scheduler's identity begins with the hostname, the pod's name.
	self, _ := os.Hostname()
	r, err := New(h.ClientSet(), h.SharedInformerFactory().Core().V1().Pods().Informer(), namespace, name, self)
	if err != nil {
		return err
	}
	// The scheduler takes part in the election only once it is set up, so
	// the lease read now cannot be this process's. The read waits no longer
	// than predecessorWait: set-up waits for it, and a lease not read is
	// left to the other replicas and to its expiry.
	readCtx, cancel := context.WithTimeout(ctx, predecessorWait)
	defer cancel()
	if err := r.ReadPredecessor(readCtx); err != nil {
		klog.FromContext(ctx).Info("Could not read the lease before the election: a lease this pod's earlier container held runs out",
			"lease", klog.KRef(namespace, name), "err", err)
	}
	go r.Run(ctx)
	klog.FromContext(ctx).Info("Releasing a crashed leader's lease as soon as the kubelet reports it", "lease", klog.KRef(namespace, name))
	return nil
}
