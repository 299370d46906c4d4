package nodeload

import (
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/core/usage"
)

// snapshotOnly is a usage source that does not tell what pods use.
type snapshotOnly struct{}

func (snapshotOnly) Snapshot() *usage.Snapshot { return nil }

func TestSignEstimate(t *testing.T) {
	pod := func(cpu, controller string) *v1.Pod {
		p := boundPod("p", "")
		p.Spec.Containers[0].Resources.Requests = v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("64Mi")}
		if controller != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: controller, UID: types.UID(controller), Controller: ptr.To(true)}}
		}
		return p
	}
	sign := func(tr *Tracker, p *v1.Pod) string {
		t.Helper()
		f := tr.SignEstimate("P", p, flat)
		if f.Key != "P.v1.Pod.UsageEstimate()" {
			t.Errorf("key %q, want one per plugin", f.Key)
		}
		b, err := json.Marshal(f.Value)
		if err != nil {
			t.Fatalf("the fragment must marshal to JSON: %v", err)
		}
		return string(b)
	}

	bySiblings := NewTracker(podUsageSource{}, Options{Registerer: prometheus.NewRegistry()})
	if err := bySiblings.Attach("test", informerHandle{factory: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}); err != nil {
		t.Fatal(err)
	}
	byRequests := NewTracker(snapshotOnly{}, Options{Registerer: prometheus.NewRegistry()})
	if err := byRequests.Attach("test", informerHandle{factory: informers.NewSharedInformerFactory(fake.NewClientset(), 0)}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		tracker  *Tracker
		a, b     *v1.Pod
		wantSame bool
	}{
		{name: "replicas of one workload", tracker: bySiblings, a: pod("100m", "web"), b: pod("100m", "web"), wantSame: true},
		{name: "other requests", tracker: bySiblings, a: pod("100m", "web"), b: pod("200m", "web")},
		{name: "other workload, estimated by siblings", tracker: bySiblings, a: pod("100m", "web"), b: pod("100m", "db")},
		{name: "other workload, estimated by requests", tracker: byRequests, a: pod("100m", "web"), b: pod("100m", "db"), wantSame: true},
		{name: "bare pods", tracker: bySiblings, a: pod("100m", ""), b: pod("100m", ""), wantSame: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := sign(tt.tracker, tt.a), sign(tt.tracker, tt.b)
			if (a == b) != tt.wantSame {
				t.Errorf("signatures %s and %s: same = %v, want %v", a, b, a == b, tt.wantSame)
			}
		})
	}
}
