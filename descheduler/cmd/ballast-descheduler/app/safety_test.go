package app

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
	frameworkfake "sigs.k8s.io/descheduler/pkg/framework/fake"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"
	"sigs.k8s.io/descheduler/pkg/framework/plugins/defaultevictor"
	"sigs.k8s.io/descheduler/pkg/utils"
	"sigs.k8s.io/descheduler/test"
)

// Each safety guarantee of the shipped policy, checked against the
// DefaultEvictor built from that policy's own args.
func TestShippedPolicyProtectsPods(t *testing.T) {
	if err := preRun(t); err != nil {
		t.Fatal(err)
	}
	client := fake.NewClientset()
	policy, err := descheduler.LoadPolicyConfig(policyPath, client, pluginregistry.PluginRegistry)
	if err != nil {
		t.Fatal(err)
	}
	var args *defaultevictor.DefaultEvictorArgs
	for _, pc := range policy.Profiles[0].PluginConfigs {
		if a, ok := pc.Args.(*defaultevictor.DefaultEvictorArgs); ok {
			args = a
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	podsOn, err := podutil.BuildGetPodsAssignedToNodeFunc(factory.Core().V1().Pods().Informer())
	if err != nil {
		t.Fatal(err)
	}
	handle := &frameworkfake.HandleImpl{ClientsetImpl: client, SharedInformerFactoryImpl: factory, GetPodsAssignedToNodeFuncImpl: podsOn}
	plugin, err := defaultevictor.New(t.Context(), args, handle)
	if err != nil {
		t.Fatal(err)
	}
	evictor := plugin.(*defaultevictor.DefaultEvictor)

	owned := func(p *v1.Pod) { test.SetRSOwnerRef(p) }
	tests := []struct {
		name      string
		edit      func(*v1.Pod)
		evictable bool
	}{
		{name: "ReplicaSet pod", edit: owned, evictable: true},
		{name: "DaemonSet pod", edit: test.SetDSOwnerRef},
		{name: "mirror pod", edit: func(p *v1.Pod) { owned(p); test.SetMirrorPodAnnotation(p) }},
		{name: "static pod", edit: func(p *v1.Pod) {
			owned(p)
			p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
		}},
		{name: "system-critical pod", edit: func(p *v1.Pod) { owned(p); test.SetPodPriority(p, utils.SystemCriticalPriority) }},
		{name: "bare pod", edit: func(*v1.Pod) {}},
		{name: "pod with emptyDir and hostPath", edit: func(p *v1.Pod) { owned(p); test.SetHostPathEmptyDirVolumeSource(p) }},
		{name: "opted out by annotation", edit: func(p *v1.Pod) {
			owned(p)
			p.Annotations = map[string]string{"descheduler.alpha.kubernetes.io/prefer-no-eviction": ""}
		}},
		{name: "terminating pod", edit: func(p *v1.Pod) { owned(p); p.DeletionTimestamp = &metav1.Time{} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := test.BuildTestPod("p", 100, 100, "node-a", tc.edit)
			if got := evictor.Filter(p); got != tc.evictable {
				t.Errorf("evictable = %v, want %v", got, tc.evictable)
			}
		})
	}
}
