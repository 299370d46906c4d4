package status

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	restclient "k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// TestCollectAsksLoadWatcherInItsScheme checks that status asks a
// load-watcher serving TLS through the API server proxy with https, and
// one serving plain HTTP with http.
func TestCollectAsksLoadWatcherInItsScheme(t *testing.T) {
	for want, args := range map[string][]string{
		"http":  {"--provider=metrics-server", "--listen-address=:2020"},
		"https": {"--listen-address=:2020", "--tls-cert-file=/etc/ballast/tls/tls.crt", "--tls-private-key-file=/etc/ballast/tls/tls.key"},
	} {
		t.Run(want, func(t *testing.T) {
			d := &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher", Namespace: "ballast-system"},
				Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "load-watcher", Args: args}},
				}}},
			}
			cs := fake.NewClientset(d)
			cs.PrependProxyReactor("services", func(k8stesting.Action) (bool, restclient.ResponseWrapper, error) {
				return true, unreachable{}, nil
			})
			r := Collect(context.Background(), Options{Client: cs, Namespace: "ballast-system", ReleaseName: "ballast", LoadWatcherPort: 2020})
			if r.UsageErr == nil || !strings.Contains(r.UsageErr.Error(), "load-watcher.networkPolicy.apiFrom") {
				t.Errorf("UsageErr = %v, want the NetworkPolicy named", r.UsageErr)
			}
			var got string
			for _, a := range cs.Actions() {
				if p, ok := a.(k8stesting.ProxyGetAction); ok {
					got = p.GetScheme()
				}
			}
			if got != want {
				t.Errorf("proxied with scheme %q, want %q", got, want)
			}
		})
	}
}

// unreachable is a proxied request that finds no load-watcher.
type unreachable struct{}

func (unreachable) DoRaw(context.Context) ([]byte, error) {
	return nil, errors.New("no endpoints available")
}
func (unreachable) Stream(context.Context) (io.ReadCloser, error) {
	return nil, errors.New("no endpoints available")
}

func TestForwardFindsAReadyPodAndItsTargetPort(t *testing.T) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher", Namespace: "ballast-system"},
		Spec:       appsv1.DeploymentSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "lw"}}},
	}
	pod := func(name string, ready bool, phase corev1.PodPhase) *corev1.Pod {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ballast-system", Labels: map[string]string{"app": "lw"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "load-watcher",
				Ports: []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {Name: "metrics", ContainerPort: 2021}}}}},
			Status: corev1.PodStatus{Phase: phase},
		}
		if ready {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		return p
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher", Namespace: "ballast-system"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{
			{Name: "http", Port: 2020, TargetPort: intstr.FromString("http")},
			{Name: "metrics", Port: 2021, TargetPort: intstr.FromInt32(2021)},
		}},
	}
	cs := fake.NewClientset(d, svc, pod("starting", false, corev1.PodRunning), pod("done", true, corev1.PodSucceeded), pod("serving", true, corev1.PodRunning))
	ctx := context.Background()
	p, err := readyPod(ctx, cs, d)
	if err != nil || p.Name != "serving" {
		t.Fatalf("readyPod() = %v, %v; want the ready, running pod", p, err)
	}
	for svcPort, want := range map[int]int{2020: 8080, 2021: 2021} {
		if got, err := targetPort(ctx, cs, d, p, svcPort); err != nil || got != want {
			t.Errorf("targetPort(%d) = %d, %v; want %d", svcPort, got, err, want)
		}
	}
	if _, err := targetPort(ctx, cs, d, p, 9999); err == nil {
		t.Error("targetPort() of a port the Service does not have succeeded")
	}
	empty := fake.NewClientset(d, pod("starting", false, corev1.PodRunning))
	if _, err := readyPod(ctx, empty, d); err == nil {
		t.Error("readyPod() found a pod where none is ready")
	}
}
