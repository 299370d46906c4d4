package plugins

import (
	"context"
	"fmt"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// NewFramework builds the framework of profile as kube-scheduler does when it
// starts: its in-tree plugins and those of registry (Ballast's), each built
// with its args, with opts (the client, informers, snapshot the framework
// reads).
func NewFramework(ctx context.Context, registry frameworkruntime.Registry, profile *schedconfig.KubeSchedulerProfile,
	opts ...frameworkruntime.Option) (framework.Framework, error) {
	// The framework records into kube-scheduler's metrics, as in the
	// scheduler: they must exist (registering them twice does nothing).
	schedmetrics.Register()
	r := frameworkplugins.NewInTreeRegistry()
	if err := r.Merge(registry); err != nil {
		return nil, err
	}
	fw, err := frameworkruntime.NewFramework(ctx, r, profile, opts...)
	if err != nil {
		return nil, fmt.Errorf("profile %q: %w", profile.SchedulerName, err)
	}
	return fw, nil
}
