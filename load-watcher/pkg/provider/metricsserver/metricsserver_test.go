package metricsserver

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	"k8s.io/metrics/pkg/client/clientset/versioned/fake"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

var ts = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

func nodeMetrics(name, cpu, memory string) *metricsv1beta1.NodeMetrics {
	return &metricsv1beta1.NodeMetrics{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Timestamp:  metav1.NewTime(ts),
		Window:     metav1.Duration{Duration: 15 * time.Second},
		Usage: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse(cpu),
			corev1.ResourceMemory: resource.MustParse(memory),
		},
	}
}

// newFake returns a fake clientset holding items. The typed fake lists the
// resource "nodes" of metrics.k8s.io, so objects go into the tracker under
// that resource explicitly.
func newFake(t *testing.T, items ...*metricsv1beta1.NodeMetrics) *fake.Clientset {
	t.Helper()
	cs := fake.NewSimpleClientset()
	for _, m := range items {
		if err := cs.Tracker().Create(metricsv1beta1.SchemeGroupVersion.WithResource("nodes"), m, ""); err != nil {
			t.Fatalf("adding %s: %v", m.Name, err)
		}
	}
	return cs
}

func TestSample(t *testing.T) {
	cs := newFake(t,
		nodeMetrics("a", "1500m", "2Gi"),
		nodeMetrics("b", "250m", "512Mi"),
		nodeMetrics("gone", "1", "1Gi"), // not in the node list
	)
	p, err := New(Config{Client: cs})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []provider.Node{
		// 1.5 of 3 allocatable cores = 50 %; 2Gi of 8Gi = 25 %.
		{Name: "a", Allocatable: provider.Quantities{MilliCPU: 3000, MemoryBytes: 8 << 30}},
		// 250m of 1000m = 25 %; 512Mi of 2Gi = 25 %.
		{Name: "b", Allocatable: provider.Quantities{MilliCPU: 1000, MemoryBytes: 2 << 30}},
		// No NodeMetrics: absent from the result, not 0 %.
		{Name: "c", Allocatable: provider.Quantities{MilliCPU: 1000, MemoryBytes: 1 << 30}},
	}
	got, err := p.Sample(context.Background(), nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Sample{
		{Node: "a", Time: ts, CPU: 50, Memory: 25, HasCPU: true, HasMemory: true},
		{Node: "b", Time: ts, CPU: 25, Memory: 25, HasCPU: true, HasMemory: true},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("Sample (-want,+got):\n%s", diff)
	}
}

func TestSampleUnknownAllocatableLeavesResourceOut(t *testing.T) {
	p, _ := New(Config{Client: newFake(t, nodeMetrics("a", "1", "1Gi"))})
	got, err := p.Sample(context.Background(), []provider.Node{{Name: "a", Allocatable: provider.Quantities{MilliCPU: 2000}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Sample{{Node: "a", Time: ts, CPU: 50, HasCPU: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sample (-want,+got):\n%s", diff)
	}
}

func TestSampleListError(t *testing.T) {
	cs := newFake(t)
	cs.PrependReactor("list", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the server is currently unable to handle the request")
	})
	p, _ := New(Config{Client: cs})
	if _, err := p.Sample(context.Background(), []provider.Node{{Name: "a"}}); err == nil {
		t.Errorf("Sample: want the list error")
	}
}

func TestNewRequiresClient(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Errorf("New without client: want error")
	}
}
