package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	schedulerexplain "github.com/ballast-sched/ballast/scheduler/pkg/explain"
	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/moves"
	deschedulerconfig "github.com/ballast-sched/ballast/descheduler/config"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/explain"
	"github.com/ballast-sched/ballast/scheduler/config"
)

// TestExplainPod runs `ballast explain pod` on a real API server with the
// scheduler's configuration in its ConfigMap and no load-watcher: a pod no
// node can take says which filter stops it on every node, a pod another
// scheduler places says so, a bound pod shows where it would go now and
// its events, and a missing load-watcher is said, not fatal. The CLI asks
// the scheduler's explain endpoint, served here by the scheduler's own
// handler on the same API server; the lane reaches a real scheduler's
// through the kubelet's port-forward.
func TestExplainPod(t *testing.T) {
	c, ctx := startCluster(t)
	for _, n := range []cluster.NodeSpec{{Name: "node-a"}, {Name: "node-b", Labels: map[string]string{"disk": "ssd"}}} {
		if _, err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	ns := charts.DefaultNamespace
	createNamespace(t, ctx, c.Client, ns)
	cfg := strings.Replace(config.DefaultScheduler, "schedulerName: default-scheduler", "schedulerName: ballast-scheduler", 1)
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: charts.ComponentFullname(charts.DefaultReleaseName, "scheduler")},
		Data:       map[string]string{"config.yaml": cfg},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The descheduler's policy and a move it remembers of web's ReplicaSet.
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: charts.ComponentFullname(charts.DefaultReleaseName, "descheduler")},
		Data:       map[string]string{"policy.yaml": deschedulerconfig.Policy},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	moved := time.Now().Add(-3 * time.Minute).UTC().Format(time.RFC3339)
	if _, err := c.Client.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: charts.ComponentFullname(charts.DefaultReleaseName, "descheduler") + "-moves"},
		Data: map[string]string{moves.Key: `{"moves":[{"workload":{"Namespace":"default","Kind":"ReplicaSet","Name":"web-rs"},` +
			`"pod":"web-old","source":"node-a","destination":"node-b","at":"` + moved + `","sourceLoad":{"memory":4},"destinationLoad":{"memory":5},` +
			`"landedOn":"node-b","hot":true,"why":"Moved off node-a by LoadAwareBalance: memory 93.0% over its high threshold 85.0%",` +
			`"sourceUsage":{"memory":93},"destinationUsage":{"memory":40},"sourceAfter":{"memory":89}}]}`},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := func(name, scheduler, node string, selector map[string]string) {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec: corev1.PodSpec{SchedulerName: scheduler, NodeName: node, NodeSelector: selector, Containers: []corev1.Container{{
				Name: "c", Image: "registry.k8s.io/pause:3.10",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}},
			}}},
		}
		if name == "web" {
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-rs", UID: "web-rs",
				Controller: ptr.To(true)}}
		}
		if name == "db-0" {
			// A StatefulSet's pod whose volume is kept on node-a, as k3s's
			// local-path provisioner keeps it.
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "db", UID: "db",
				Controller: ptr.To(true)}}
			p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db-0"}}}}
		}
		if _, err := c.Client.CoreV1().Pods("default").Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod("gpu", "ballast-scheduler", "", map[string]string{"accelerator": "gpu"})
	pod("other", "default-scheduler", "", nil)
	pod("web", "ballast-scheduler", "node-b", map[string]string{"disk": "ssd"})
	if _, err := c.Client.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-db-0"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/lib/rancher/k3s/storage/pvc-db-0"}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{"node-a"}}}}}}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().PersistentVolumeClaims("default").Create(ctx, &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "default"},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: "pvc-db-0", AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod("db-0", "ballast-scheduler", "node-a", nil)
	if _, err := c.Client.CoreV1().Events("default").Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "web.scheduled", Namespace: "default"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: "default", Name: "web"},
		Reason:         "Scheduled", Message: "Successfully assigned default/web to node-b", Type: corev1.EventTypeNormal,
		Source: corev1.EventSource{Component: "ballast-scheduler"}, LastTimestamp: metav1.NewTime(time.Now()),
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := "--kubeconfig=" + c.KubeconfigPath()
	configFile := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(configFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	endpoint := httptest.NewServer(schedulerexplain.Handler(schedulerexplain.Source{ConfigFile: configFile, Client: c.Client, RestConfig: c.RestConfig}))
	t.Cleanup(endpoint.Close)
	runExplain := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		cmd := explain.NewCommandWith(log.New(&errOut), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			func(*rest.Config, kubernetes.Interface, string, string) explain.Scheduler {
				return endpointScheduler(endpoint.URL)
			})
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&errOut)
		err := cmd.ExecuteContext(ctx)
		return out.String(), errOut.String(), err
	}
	asJSON := func(t *testing.T, name string) explain.PodExplanation {
		t.Helper()
		out, stderr, err := runExplain("pod", "default/"+name, kubeconfig, "-o", "json", "--timeout=40s")
		if err != nil {
			t.Fatalf("explain pod %s: %v\n%s", name, err, stderr)
		}
		var ex explain.PodExplanation
		if err := json.Unmarshal([]byte(out), &ex); err != nil {
			t.Fatalf("decoding %q: %v", out, err)
		}
		return ex
	}

	t.Run("pending", func(t *testing.T) {
		ex := asJSON(t, "gpu")
		if ex.Now == nil || len(ex.Now.Best) != 0 || len(ex.Now.Nodes) != 2 {
			t.Fatalf("explanation %+v: want both nodes, none fitting", ex.Now)
		}
		for _, n := range ex.Now.Nodes {
			if n.Feasible || n.Rejected == nil || n.Rejected.Plugin != "NodeAffinity" {
				t.Errorf("%s: %+v; want NodeAffinity to reject it", n.Name, n.Rejected)
			}
		}
		if ex.UsageError == "" {
			t.Error("no load-watcher runs, yet no usage error is said")
		}
	})
	t.Run("-n is the pod's namespace", func(t *testing.T) {
		// As in kubectl: -n names the pod's namespace, not Ballast's.
		out, stderr, err := runExplain("pod", "-n", "default", "gpu", kubeconfig, "-o", "json", "--timeout=40s")
		if err != nil {
			t.Fatalf("explain pod -n default gpu: %v\n%s", err, stderr)
		}
		var ex explain.PodExplanation
		if err := json.Unmarshal([]byte(out), &ex); err != nil || ex.Namespace != "default" || ex.Name != "gpu" || ex.Now == nil {
			t.Errorf("explain pod -n default gpu: %+v, %v", ex, err)
		}
		if _, _, err := runExplain("pod", "-n", ns, "gpu", kubeconfig, "--timeout=40s"); err == nil || !strings.Contains(err.Error(), "reading pod "+ns+"/gpu") {
			t.Errorf("explain pod -n %s gpu: err = %v, want the pod looked for in %s", ns, err, ns)
		}
	})
	t.Run("another scheduler", func(t *testing.T) {
		if ex := asJSON(t, "other"); ex.Now != nil || !strings.Contains(ex.NotBallast, "default-scheduler") {
			t.Fatalf("%+v: want it to say default-scheduler places it", ex)
		}
	})
	t.Run("node", func(t *testing.T) {
		if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			p, err := c.Client.CoreV1().Pods("default").Get(ctx, "db-0", metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning, nil
		}); err != nil {
			t.Fatalf("db-0 never ran: %v", err)
		}
		out, stderr, err := runCLI("explain", "node", "node-a", kubeconfig, "--timeout=40s")
		if err != nil {
			t.Fatalf("explain node node-a: %v\n%s", err, stderr)
		}
		t.Logf("\n%s", out)
		for _, want := range []string{"Node node-a", "No usage from load-watcher", "Scheduler (window 5m): no usable usage",
			"Descheduler (window 5m): no usable usage", "Recent moves off and onto it:", "off node-a, expected on node-b",
			"Pods the descheduler never moves off it:", "default/db-0: pinned by its volume: volume pvc-db-0 of claim data-db-0 is reachable from node-a alone"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q", want)
			}
		}
	})
	t.Run("bound", func(t *testing.T) {
		out, stderr, err := runExplain("pod", "default/web", kubeconfig, "--timeout=40s")
		if err != nil {
			t.Fatalf("explain pod web: %v\n%s", err, stderr)
		}
		t.Logf("\n%s", out)
		for _, want := range []string{"on node-b", "Now: it would go where it is, node-b", "node-a", "NodeAffinity", "Scheduled",
			"Successfully assigned default/web to node-b", "placed by requests",
			"Moves of its workload (default/ReplicaSet/web-rs)", "off node-a, expected on node-b; its replacement ran there, as planned",
			"memory 93.0% over its high threshold", "afterwards node-a came down as expected (memory 89.0%, expected 89.0%)"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q", want)
			}
		}
	})
}

// endpointScheduler is a scheduler's explain endpoint at a URL.
type endpointScheduler string

func (e endpointScheduler) ExplainPod(ctx context.Context, namespace, name string) (*explanation.Response, error) {
	return explanation.Get(ctx, http.DefaultClient, string(e), namespace, name)
}
