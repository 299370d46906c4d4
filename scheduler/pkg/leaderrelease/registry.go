package leaderrelease

import (
	"context"
	"fmt"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

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
	go r.Run(ctx)
	klog.FromContext(ctx).Info("Releasing a crashed leader's lease as soon as the kubelet reports it", "lease", klog.KRef(namespace, name))
	return nil
}
