package health

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/installer/pkg/forward"
)

// apiServer stands in for the API server's service proxy in front of a
// load-watcher serving list over plain HTTP: it records every path asked
// and answers 503, as a proxy without endpoints does, for anything but
// load-watcher's usage.
func apiServer(t *testing.T, list *apiv1.UsageList) (*httptest.Server, *[]string) {
	t.Helper()
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		if list == nil || r.URL.Path != "/api/v1/namespaces/ballast-system/services/http:ballast-load-watcher:2020/proxy"+apiv1.Path {
			http.Error(w, `{"kind":"Status","message":"no endpoints available"}`, http.StatusServiceUnavailable)
			return
		}
		_ = json.NewEncoder(w).Encode(list)
	}))
	t.Cleanup(srv.Close)
	return srv, &paths
}

func loadWatcher(args ...string) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher", Namespace: "ballast-system"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "lw"}},
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "load-watcher", Args: args}}}},
		},
	}
}

// TestCollectAsksLoadWatcherInItsScheme checks that status asks a
// load-watcher serving TLS through the API server proxy with https, and
// one serving plain HTTP with http, and says what to do when the proxy
// cannot reach it.
func TestCollectAsksLoadWatcherInItsScheme(t *testing.T) {
	for want, args := range map[string][]string{
		"http":  {"--provider=metrics-server", "--listen-address=:2020"},
		"https": {"--listen-address=:2020", "--tls-cert-file=/etc/ballast/tls/tls.crt", "--tls-private-key-file=/etc/ballast/tls/tls.key"},
	} {
		t.Run(want, func(t *testing.T) {
			srv, paths := apiServer(t, nil)
			cs := fake.NewClientset(loadWatcher(args...))
			r := Collect(context.Background(), Options{Client: cs, RestConfig: &rest.Config{Host: srv.URL}, Namespace: "ballast-system", ReleaseName: "ballast", LoadWatcher: LoadWatcher{Port: 2020}})
			if r.UsageErr == nil || !strings.Contains(r.UsageErr.Error(), "load-watcher.networkPolicy.apiFrom") ||
				!strings.Contains(r.UsageErr.Error(), "no running pod") {
				t.Errorf("UsageErr = %v, want the NetworkPolicy named and the port-forward's failure", r.UsageErr)
			}
			wantPath := "/api/v1/namespaces/ballast-system/services/" + want + ":ballast-load-watcher:2020/proxy" + apiv1.Path
			if !slices.Equal(*paths, []string{wantPath}) {
				t.Errorf("asked %q, want %q", *paths, wantPath)
			}
		})
	}
}

// TestCollectReadsUsageWithLoadWatchersClient serves a load-watcher answer
// through the proxy: status checks it as the scheduler does, leaves out a
// node the cluster does not have and lists a node without usage.
func TestCollectReadsUsageWithLoadWatchersClient(t *testing.T) {
	now := time.Now().UTC().Truncate(time.Second)
	node := func(age time.Duration, cpu float64) apiv1.NodeUsage {
		s := usage.Stats{Avg: cpu, Max: cpu, P95: cpu, Latest: cpu, Samples: 20}
		return apiv1.NodeUsage{SampleTime: now.Add(-age), SampleAgeSeconds: age.Seconds(),
			Windows: map[string]map[usage.Resource]usage.Stats{"5m": {usage.CPU: s, usage.Memory: s}}}
	}
	list := &apiv1.UsageList{APIVersion: apiv1.APIVersion, Time: now, Source: "metrics-server", PeriodSeconds: 15, StaleAfterSeconds: 45,
		Windows: []string{"5m"}, Nodes: map[string]apiv1.NodeUsage{
			"pi-1": node(10*time.Second, 30), "pi-2": node(5*time.Minute, 20), "gone": node(time.Second, 50),
			"pi-4": {SampleTime: now, Windows: map[string]map[usage.Resource]usage.Stats{"5m": {usage.CPU: {Avg: 900, Samples: 20}}}},
		}}
	srv, _ := apiServer(t, list)
	objs := []runtime.Object{loadWatcher("--listen-address=:2020")}
	for _, n := range []string{"pi-1", "pi-2", "pi-3", "pi-4"} {
		objs = append(objs, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	r := Collect(context.Background(), Options{Client: fake.NewClientset(objs...), RestConfig: &rest.Config{Host: srv.URL},
		Namespace: "ballast-system", ReleaseName: "ballast", LoadWatcher: LoadWatcher{Port: 2020}, Now: func() time.Time { return now }})
	if r.Usage == nil {
		t.Fatalf("no usage: %v", r.UsageErr)
	}
	if r.UsageVia != "the API server's service proxy" {
		t.Errorf("UsageVia = %q", r.UsageVia)
	}
	rows := r.Usage.Rows(now)
	got := map[string]string{}
	for _, row := range rows {
		got[row.Node] = fmt.Sprintf("%.0f %s", row.CPU, row.State)
	}
	want := map[string]string{
		"pi-1": "30 ",
		"pi-2": "20 stale: placed by requests",
		"pi-3": "0 no usage yet: placed by requests",
		"pi-4": "0 refused (nodes[pi-4].windows[5m][cpu].avg: Invalid value: 900: above 500 % of allocatable): placed by requests",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows (-want,+got):\n%s", diff)
	}
}

func TestForwardFindsARunningPodAndItsTargetPort(t *testing.T) {
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
	p, err := forward.RunningPod(ctx, cs, d)
	if err != nil || p.Name != "serving" {
		t.Fatalf("forward.RunningPod() = %v, %v; want the ready, running pod", p, err)
	}
	for svcPort, want := range map[int]int{2020: 8080, 2021: 2021} {
		if got, err := targetPort(ctx, cs, d, p, svcPort); err != nil || got != want {
			t.Errorf("targetPort(%d) = %d, %v; want %d", svcPort, got, err, want)
		}
	}
	if _, err := targetPort(ctx, cs, d, p, 9999); err == nil {
		t.Error("targetPort() of a port the Service does not have succeeded")
	}
	// One that is not ready still says why on /readyz.
	starting := fake.NewClientset(d, pod("starting", false, corev1.PodRunning), pod("done", true, corev1.PodSucceeded))
	if p, err := forward.RunningPod(ctx, starting, d); err != nil || p.Name != "starting" {
		t.Errorf("forward.RunningPod() = %v, %v; want the running pod that is not ready", p, err)
	}
	empty := fake.NewClientset(d, pod("done", true, corev1.PodSucceeded))
	if _, err := forward.RunningPod(ctx, empty, d); err == nil {
		t.Error("forward.RunningPod() found a pod where none runs")
	}
}
