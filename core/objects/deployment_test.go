package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestMakeDeployment(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  *appsv1.Deployment
		want *appsv1.Deployment
	}{
		{
			name: "defaults",
			got:  MakeDeployment("web").Obj(),
			want: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](1),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
						Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: DefaultImage}}},
					},
				},
			},
		},
		{
			name: "every setter",
			got: MakeDeployment("db").Namespace("data").Replicas(3).Label("tier", "back").SchedulerName("ballast").
				Container("db").Image("db:2", corev1.PullNever).Requests("100m", "").Limits("", "1Gi").
				NodeSelector(map[string]string{"arch": "arm64"}).GracePeriod(1).Obj(),
			want: &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "data", Labels: map[string]string{"tier": "back"}},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](3),
					Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db", "tier": "back"}},
					Template: corev1.PodTemplateSpec{
						ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "db", "tier": "back"}},
						Spec: corev1.PodSpec{
							SchedulerName:                 "ballast",
							NodeSelector:                  map[string]string{"arch": "arm64"},
							TerminationGracePeriodSeconds: ptr.To[int64](1),
							Containers: []corev1.Container{{Name: "db", Image: "db:2", ImagePullPolicy: corev1.PullNever,
								Resources: corev1.ResourceRequirements{
									Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
									Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")},
								}}},
						},
					},
				},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// Obj hands out copies: a test that changes one Deployment does not change
// the next the wrapper builds.
func TestObjIsACopy(t *testing.T) {
	w := MakeDeployment("web")
	first := w.Obj()
	first.Spec.Template.Labels["app"] = "changed"
	if got := w.Obj().Spec.Template.Labels["app"]; got != "web" {
		t.Errorf("second Obj's label = %q, want web", got)
	}
}
