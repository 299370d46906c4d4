package balance

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"
)

// deploymentOf returns a settled one-replica Deployment "app", its
// ReplicaSet and a pod of it, its defaults as the API server sets them (25 %
// surge and unavailable).
func deploymentOf() (*appsv1.Deployment, *appsv1.ReplicaSet, *v1.Pod) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app", UID: "d-1", Generation: 2, ResourceVersion: "7"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromString("25%")), MaxUnavailable: ptr.To(intstr.FromString("25%"))}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 1, UpdatedReplicas: 1, AvailableReplicas: 1, ReadyReplicas: 1},
	}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app-5d8f", UID: "rs-1",
		Labels:          map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "5d8f"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "app", UID: "d-1", Controller: ptr.To(true)}}}}
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "app-5d8f-x2x", Labels: map[string]string{appsv1.DefaultDeploymentUniqueLabelKey: "5d8f"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "app-5d8f", UID: "rs-1", Controller: ptr.To(true)}}}}
	return d, rs, pod
}

// settled returns a settled one-replica Deployment name, surgeable.
func settled(name string, uid types.UID) *appsv1.Deployment {
	d, _, _ := deploymentOf()
	d.Name, d.UID = name, uid
	return d
}

func TestSurgeTarget(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*appsv1.Deployment, *appsv1.ReplicaSet, *v1.Pod)
		// others are more objects in the cluster.
		others  []runtime.Object
		whyNot  string // empty: surgeable
		want    string // the Deployment to roll out; "app" if empty
		missing bool
	}{
		{name: "the defaults surge one pod first", edit: func(*appsv1.Deployment, *appsv1.ReplicaSet, *v1.Pod) {}},
		{name: "no strategy given is the defaults", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{}
		}},
		{name: "two replicas", whyNot: "2 replicas", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) { d.Spec.Replicas = ptr.To[int32](2) }},
		{name: "recreate", whyNot: "Recreate", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) {
			d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}
		}},
		{name: "no surge", whyNot: "removes the pod before", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) {
			d.Spec.Strategy.RollingUpdate.MaxSurge = ptr.To(intstr.FromInt32(0))
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromInt32(1))
		}},
		{name: "unavailable 100 %", whyNot: "removes the pod before", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) {
			d.Spec.Strategy.RollingUpdate.MaxUnavailable = ptr.To(intstr.FromString("100%"))
		}},
		{name: "paused", whyNot: "paused", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) { d.Spec.Paused = true }},
		{name: "rollout under way", whyNot: "rollout", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) { d.Status.UpdatedReplicas = 0 }},
		{name: "spec not observed yet", whyNot: "rollout", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) { d.Generation = 3 }},
		{name: "a volume claim", whyNot: "volume claim", edit: func(_ *appsv1.Deployment, _ *appsv1.ReplicaSet, p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
		}},
		{name: "a bare ReplicaSet's pod", whyNot: "not a Deployment", edit: func(_ *appsv1.Deployment, rs *appsv1.ReplicaSet, p *v1.Pod) {
			rs.OwnerReferences = nil
			delete(p.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
		}},
		// The ReplicaSet's name and hash read "app", but no Deployment controls it.
		{name: "a bare ReplicaSet named like a Deployment's", whyNot: "not a Deployment", edit: func(_ *appsv1.Deployment, rs *appsv1.ReplicaSet, _ *v1.Pod) {
			rs.OwnerReferences = nil
		}},
		// ReplicaSet web-5d8f, which "app" controls, reads as Deployment "web" by its name.
		{name: "the controller, not the Deployment the name reads", want: "app", others: []runtime.Object{settled("web", "d-2")},
			edit: func(_ *appsv1.Deployment, rs *appsv1.ReplicaSet, p *v1.Pod) {
				rs.Name, p.OwnerReferences[0].Name = "web-5d8f", "web-5d8f"
			}},
		{name: "the Deployment was created again under its name", whyNot: "not the one", edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) {
			d.UID = "d-3"
		}},
		{name: "the ReplicaSet was created again under its name", whyNot: "not the one", edit: func(_ *appsv1.Deployment, rs *appsv1.ReplicaSet, _ *v1.Pod) {
			rs.UID = "rs-3"
		}},
		{name: "a pod of another kind's ReplicaSet", whyNot: "not a Deployment", edit: func(_ *appsv1.Deployment, _ *appsv1.ReplicaSet, p *v1.Pod) {
			p.OwnerReferences[0].APIVersion = "example.com/v1"
		}},
		{name: "the Deployment is gone", missing: true, edit: func(d *appsv1.Deployment, _ *appsv1.ReplicaSet, _ *v1.Pod) { d.Name = "other" }},
		{name: "the ReplicaSet is gone", missing: true, edit: func(_ *appsv1.Deployment, rs *appsv1.ReplicaSet, _ *v1.Pod) { rs.Name = "other" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, rs, pod := deploymentOf()
			tc.edit(d, rs, pod)
			got, whyNot, err := SurgeTarget(context.Background(), fake.NewClientset(append(tc.others, d, rs)...), pod)
			switch {
			case tc.missing:
				if err == nil || got != nil {
					t.Errorf("got %v, %v; want an error", got, err)
				}
			case err != nil:
				t.Fatal(err)
			case tc.whyNot == "":
				if got == nil {
					t.Fatalf("not surgeable: %s", whyNot)
				}
				if want := cmp.Or(tc.want, "app"); got.Name != want {
					t.Errorf("rolls out Deployment %s, want %s", got.Name, want)
				}
			case got != nil || !strings.Contains(whyNot, tc.whyNot):
				t.Errorf("got %v, why not %q; want none because %q", got != nil, whyNot, tc.whyNot)
			}
		})
	}
}

func TestSurgeAnnotatesThePodTemplate(t *testing.T) {
	d, _, _ := deploymentOf()
	client := fake.NewClientset(d)
	at := time.Date(2026, 11, 26, 21, 0, 0, 0, time.UTC)
	if err := Surge(context.Background(), client, d, at); err != nil {
		t.Fatal(err)
	}
	got, err := client.AppsV1().Deployments("default").Get(context.Background(), "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v := got.Spec.Template.Annotations[SurgeAnnotation]; v != "2026-11-26T21:00:00Z" {
		t.Errorf("pod template annotation %s = %q", SurgeAnnotation, v)
	}
}
