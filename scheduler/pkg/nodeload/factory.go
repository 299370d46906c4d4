package nodeload

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// Factory returns the factory kube-scheduler calls for every profile that
// enables a plugin built by build; all instances share t.
func Factory[P fwk.Plugin](t *Tracker, build func(context.Context, runtime.Object, fwk.Handle, *Tracker) (P, error)) frameworkruntime.PluginFactory {
	return func(ctx context.Context, obj runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
		return build(ctx, obj, h, t)
	}
}
