package nodeload

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

func TestAfterPodEvent(t *testing.T) {
	waiting := boundPod("waiting", "")
	withCPU := func(name, node, cpu string) *v1.Pod {
		p := boundPod(name, node)
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}
		return p
	}
	tests := []struct {
		name     string
		old, new any
		want     fwk.QueueingHint
	}{
		{name: "a pod on a node deleted", old: boundPod("gone", "n1"), want: fwk.Queue},
		{name: "a pending pod deleted", old: boundPod("gone", ""), want: fwk.QueueSkip},
		{name: "a pod on a node scaled down", old: withCPU("big", "n1", "2"), new: withCPU("big", "n1", "1"), want: fwk.Queue},
		{name: "a pod on a node changed otherwise", old: withCPU("big", "n1", "1"), new: withCPU("big", "n1", "1"), want: fwk.QueueSkip},
		{name: "a pending pod scaled down", old: withCPU("big", "", "2"), new: withCPU("big", "", "1"), want: fwk.QueueSkip},
		{name: "the waiting pod itself scaled down", old: withCPU("waiting", "", "2"), new: withCPU("waiting", "", "1"), want: fwk.Queue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AfterPodEvent(klog.Background(), waiting, tt.old, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("AfterPodEvent() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestAfterNodeEvent(t *testing.T) {
	node := func(cpu, memory string) *v1.Node {
		list := v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse(memory)}
		return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Allocatable: list}}
	}
	tests := []struct {
		name     string
		old, new *v1.Node
		want     fwk.QueueingHint
	}{
		{name: "a node added", new: node("4", "8Gi"), want: fwk.Queue},
		{name: "more CPU", old: node("4", "8Gi"), new: node("8", "8Gi"), want: fwk.Queue},
		{name: "more memory", old: node("4", "8Gi"), new: node("4", "16Gi"), want: fwk.Queue},
		{name: "less of both", old: node("4", "8Gi"), new: node("2", "4Gi"), want: fwk.QueueSkip},
		{name: "the same", old: node("4", "8Gi"), new: node("4", "8Gi"), want: fwk.QueueSkip},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var oldObj any
			if tt.old != nil {
				oldObj = tt.old
			}
			got, err := AfterNodeEvent(klog.Background(), boundPod("waiting", ""), oldObj, tt.new)
			if err != nil || got != tt.want {
				t.Errorf("AfterNodeEvent() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
