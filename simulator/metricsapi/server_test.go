package metricsapi

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
)

type staticSource struct {
	usage map[string]corev1.ResourceList
	at    time.Time
}

func (s staticSource) NodeUsage() (map[string]corev1.ResourceList, time.Time, time.Duration) {
	return s.usage, s.at, 15 * time.Second
}

// TestServedThroughTheRealMetricsClient reads the server with the same
// k8s.io/metrics clientset load-watcher uses against metrics-server.
func TestServedThroughTheRealMetricsClient(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	src := staticSource{at: at, usage: map[string]corev1.ResourceList{
		"pi-1":    {corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("3Gi")},
		"mini-pc": {corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("6Gi")},
	}}
	s, err := Start(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	client, err := metricsclient.NewForConfig(s.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	nodes := client.MetricsV1beta1().NodeMetricses()

	list, err := nodes.List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if len(list.Items) != 2 || list.Items[0].Name != "mini-pc" || list.Items[1].Name != "pi-1" {
		t.Fatalf("List returned %d items %v, want mini-pc and pi-1", len(list.Items), list.Items)
	}
	pi := list.Items[1]
	if cpu := pi.Usage[corev1.ResourceCPU]; cpu.MilliValue() != 1500 {
		t.Errorf("pi-1 cpu = %s, want 1500m", cpu.String())
	}
	if mem := pi.Usage[corev1.ResourceMemory]; mem.Value() != 3<<30 {
		t.Errorf("pi-1 memory = %s, want 3Gi", mem.String())
	}
	if !pi.Timestamp.Time.Equal(at) || pi.Window.Duration != 15*time.Second {
		t.Errorf("timestamp %v window %v, want %v and 15s", pi.Timestamp, pi.Window, at)
	}

	one, err := nodes.Get(t.Context(), "mini-pc", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if mem := one.Usage[corev1.ResourceMemory]; mem.Value() != 6<<30 {
		t.Errorf("mini-pc memory = %s, want 6Gi", mem.String())
	}
	if _, err := nodes.Get(t.Context(), "ghost", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(ghost) error = %v, want NotFound", err)
	}
}
