package provider

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestNodeFromAPI(t *testing.T) {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "w1"},
		Status: corev1.NodeStatus{
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")},
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("3500m"), corev1.ResourceMemory: resource.MustParse("7Gi")},
			Addresses: []corev1.NodeAddress{
				{Type: corev1.NodeHostName, Address: "w1.lan"},
				{Type: corev1.NodeInternalIP, Address: "10.0.0.7"},
			},
		},
	}
	want := Node{
		Name:        "w1",
		InternalIP:  "10.0.0.7",
		Allocatable: Quantities{MilliCPU: 3500, MemoryBytes: 7 << 30},
		Capacity:    Quantities{MilliCPU: 4000, MemoryBytes: 8 << 30},
	}
	if diff := cmp.Diff(want, NodeFromAPI(n)); diff != "" {
		t.Errorf("NodeFromAPI (-want,+got):\n%s", diff)
	}
}
