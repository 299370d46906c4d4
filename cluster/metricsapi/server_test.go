package metricsapi

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
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

type podSource struct {
	staticSource
	pods map[types.NamespacedName]PodUsage
}

func (s podSource) PodUsage() (map[types.NamespacedName]PodUsage, time.Time, time.Duration) {
	return s.pods, s.at, 15 * time.Second
}

// TestPodsServedThroughTheRealMetricsClient reads pod usage the way the
// descheduler's LowNodeUtilization does with metricsUtilization.
func TestPodsServedThroughTheRealMetricsClient(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	web := types.NamespacedName{Namespace: "apps", Name: "web-1"}
	db := types.NamespacedName{Namespace: "data", Name: "db-0"}
	src := podSource{staticSource: staticSource{at: at}, pods: map[types.NamespacedName]PodUsage{
		web: {Container: "web", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("300m"), corev1.ResourceMemory: resource.MustParse("256Mi")}},
		db:  {Container: "db", Usage: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: resource.MustParse("2Gi")}},
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
	got, err := client.MetricsV1beta1().PodMetricses("apps").Get(t.Context(), "web-1", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if len(got.Containers) != 1 || got.Containers[0].Name != "web" {
		t.Fatalf("containers %v, want one named web", got.Containers)
	}
	if cpu := got.Containers[0].Usage[corev1.ResourceCPU]; cpu.MilliValue() != 300 {
		t.Errorf("web-1 cpu = %s, want 300m", cpu.String())
	}
	if !got.Timestamp.Time.Equal(at) {
		t.Errorf("timestamp %v, want %v", got.Timestamp, at)
	}
	// The right name in another namespace is another pod.
	if _, err := client.MetricsV1beta1().PodMetricses("data").Get(t.Context(), "web-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get(data/web-1) error = %v, want NotFound", err)
	}
	list, err := client.MetricsV1beta1().PodMetricses("data").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("List(data): %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "db-0" {
		t.Errorf("List(data) = %v, want db-0 alone", list.Items)
	}
	all, err := client.MetricsV1beta1().PodMetricses(metav1.NamespaceAll).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("List(all): %v", err)
	}
	if len(all.Items) != 2 {
		t.Errorf("List(all) returned %d pods, want 2", len(all.Items))
	}

	// A source without pods finds none.
	plain, err := Start(staticSource{at: at})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plain.Stop(context.Background()) })
	pc, err := metricsclient.NewForConfig(plain.RestConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.MetricsV1beta1().PodMetricses("apps").Get(t.Context(), "web-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("Get from a node-only source: error = %v, want NotFound", err)
	}
}
