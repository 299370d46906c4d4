package moves_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/core/moves"
)

func TestWorkloadOf(t *testing.T) {
	owned := func(kind, name string, labels map[string]string) *v1.Pod {
		yes := true
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{Kind: kind, Name: name, Controller: &yes}}}}
	}
	tests := []struct {
		name   string
		pod    *v1.Pod
		want   moves.Workload
		wantOK bool
	}{
		{name: "deployment replica set", pod: owned("ReplicaSet", "web-5d8f7c", map[string]string{"pod-template-hash": "5d8f7c"}),
			want: moves.Workload{Namespace: "ns", Kind: "Deployment", Name: "web"}, wantOK: true},
		{name: "bare replica set", pod: owned("ReplicaSet", "web", nil), want: moves.Workload{Namespace: "ns", Kind: "ReplicaSet", Name: "web"}, wantOK: true},
		{name: "statefulset", pod: owned("StatefulSet", "db", nil), want: moves.Workload{Namespace: "ns", Kind: "StatefulSet", Name: "db"}, wantOK: true},
		{name: "bare pod", pod: &v1.Pod{}, wantOK: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := moves.WorkloadOf(tc.pod)
			if ok != tc.wantOK || got != tc.want {
				t.Errorf("moves.WorkloadOf = %v, %v; want %v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}
