package app

import (
	"context"
	"fmt"
	"os"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/leaderrelease"
)

// releaseCrashedLeader returns a registry option under which the first of
// Ballast's plugins to be built starts the releaser of --leader-lease. Plugins
// are built with the scheduler, before it waits for the lease, so every
// replica watches for a crashed leader, the standby included. Without
// --leader-lease it changes nothing.
func releaseCrashedLeader(o *Options) schedapp.Option {
	return func(r frameworkruntime.Registry) error {
		namespace, name, ok := o.leaderLease()
		if !ok {
			return nil
		}
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
		return nil
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
	r, err := leaderrelease.New(h.ClientSet(), h.SharedInformerFactory().Core().V1().Pods().Informer(), namespace, name, self)
	if err != nil {
		return err
	}
	go r.Run(ctx)
	klog.FromContext(ctx).Info("Releasing a crashed leader's lease as soon as the kubelet reports it", "lease", klog.KRef(namespace, name))
	return nil
}
