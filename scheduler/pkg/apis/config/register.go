package config

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	schedv1 "k8s.io/kube-scheduler/config/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
)

// The versions Ballast's args are registered under: kube-scheduler's v1 (the
// wire format) and its internal version (what plugin factories receive).
var (
	internalVersion = schema.GroupVersion{Group: schedconfig.GroupName, Version: runtime.APIVersionInternal}
	v1Version       = schedv1.SchemeGroupVersion
)

// AddToScheme registers Ballast's plugin args and their defaults in scheme.
func AddToScheme(scheme *runtime.Scheme) error {
	for _, gv := range []schema.GroupVersion{internalVersion, v1Version} {
		scheme.AddKnownTypes(gv, &LoadAwareArgs{}, &LoadVariationRiskBalancingArgs{}, &UsageAwareFitArgs{})
	}
	scheme.AddTypeDefaultingFunc(&LoadAwareArgs{}, func(o any) { SetDefaults_LoadAwareArgs(o.(*LoadAwareArgs)) })
	scheme.AddTypeDefaultingFunc(&LoadVariationRiskBalancingArgs{}, func(o any) {
		SetDefaults_LoadVariationRiskBalancingArgs(o.(*LoadVariationRiskBalancingArgs))
	})
	scheme.AddTypeDefaultingFunc(&UsageAwareFitArgs{}, func(o any) { SetDefaults_UsageAwareFitArgs(o.(*UsageAwareFitArgs)) })
	return nil
}

// kube-scheduler decodes its config file with scheme.Scheme, built when its
// package initialised, and defaults and converts plugin args with a second
// scheme it builds lazily from the v1 SchemeBuilder. Registering in both is
// what makes `pluginConfig: [{name: LoadAware, args: {...}}]` decode into
// LoadAwareArgs, and makes enabled plugins without a pluginConfig entry get
// defaulted args.
func init() {
	schedv1.SchemeBuilder.Register(AddToScheme)
	utilruntime.Must(AddToScheme(schedscheme.Scheme))
}
