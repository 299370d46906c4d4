package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

// convertedArgs is what k3s records for a server started with Ballast's drop-in.
var convertedArgs = k3stest.NodeArgs("--kube-scheduler-arg", "config="+k3s.HostPaths("/").BootstrapSchedulerConfigInK3s())

// addServers registers k3s servers: the role labels and the node-args
// annotation k3s sets, with the arguments each last started with.
func addServers(t *testing.T, ctx context.Context, c *cluster.Cluster, nodeArgs map[string]string) {
	t.Helper()
	for name, args := range nodeArgs {
		spec := cluster.NodeSpec{Name: name, Labels: map[string]string{k3s.LabelControlPlane: "true", k3s.LabelMaster: "true"}}
		if args != "" {
			spec.Annotations = map[string]string{k3s.NodeArgsAnnotation: args}
		}
		if _, err := c.AddNode(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
}

// restartK3s plays a k3s start on a server: it records its arguments again.
func restartK3s(t *testing.T, ctx context.Context, c *cluster.Cluster, node, args string) {
	t.Helper()
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{k3s.NodeArgsAnnotation: args}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// wantLines fails the test for every line of wants that out, the output of
// what, lacks.
func wantLines(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(out, want) {
			t.Errorf("%s: output lacks %q:\n%s", what, want, out)
		}
	}
}

// holdSchedulerLease makes node's embedded kube-scheduler the leader.
func holdSchedulerLease(t *testing.T, ctx context.Context, c *cluster.Cluster, node string) {
	t.Helper()
	id := node + "_0f8e7d6c-5b4a-4932-8172-6a5b4c3d2e1f"
	_, err := c.Client.CoordinationV1().Leases(k3s.SchedulerLeaseNamespace).Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: k3s.SchedulerLeaseName, Namespace: k3s.SchedulerLeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &id},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// serverRoot lays out the host of the k3s server node.
func serverRoot(t *testing.T, node string) k3s.Paths {
	t.Helper()
	root := k3stest.ServerRoot(t)
	k3stest.KubeletCert(t, root, node)
	return k3s.HostPaths(root)
}

// applyManifest does what k3s's deploy controller does with a manifest file:
// creates or updates the HelmChart it holds, here with finalizers.
func applyManifest(t *testing.T, ctx context.Context, dyn dynamic.Interface, path string, finalizers ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	hc, err := k3s.DecodeHelmChart(data)
	if err != nil {
		t.Fatal(err)
	}
	hc.Finalizers = finalizers
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hc)
	if err != nil {
		t.Fatal(err)
	}
	res := dyn.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace)
	u := &unstructured.Unstructured{Object: obj}
	current, err := res.Get(ctx, hc.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = res.Create(ctx, u, metav1.CreateOptions{})
	case err == nil:
		u.SetResourceVersion(current.GetResourceVersion())
		_, err = res.Update(ctx, u, metav1.UpdateOptions{})
	}
	if err != nil {
		t.Fatalf("apply the HelmChart of %s: %v", path, err)
	}
}

// TestReplaceDefaultOnSeveralServers: the embedded schedulers of all k3s
// servers share one lease, so replaceDefault is safe only once every server
// runs with the drop-in. The installer sees every server through its Node,
// refuses what would leave servers inconsistent, keeps the HelmChart
// manifest on one server, and prints what is left, lease holder last.
func TestReplaceDefaultOnSeveralServers(t *testing.T) {
	c, ctx := startCluster(t)
	installHelmChartCRD(t, ctx, c.RestConfig)
	dyn := dynamic.NewForConfigOrDie(c.RestConfig)
	kc := c.KubeconfigPath()
	unconverted := k3stest.NodeArgs("--write-kubeconfig-mode", "644")
	addServers(t, ctx, c, map[string]string{"s1": unconverted, "s2": unconverted, "s3": unconverted, "s4": ""})
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "agent-1"}); err != nil {
		t.Fatal(err)
	}
	holdSchedulerLease(t, ctx, c, "s3")
	s1, s2 := serverRoot(t, "s1"), serverRoot(t, "s2")

	// A server whose arguments cannot be read: nothing is written.
	_, _, err := runCLI("install", "--root", s1.Root, "--kubeconfig", kc, "--mode", "replaceDefault")
	if err == nil || !strings.Contains(err.Error(), "server s4 (no k3s.io/node-args annotation)") || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("install with an unreadable server: err = %v", err)
	}
	if _, err := os.Stat(s1.Manifest()); !os.IsNotExist(err) {
		t.Fatal("a refused install wrote the manifest")
	}
	if err := c.RemoveNode(ctx, "s4"); err != nil {
		t.Fatal(err)
	}

	// s1 installs first, in second mode: the HelmChart names s1 as the server carrying it.
	// No helm-controller here to wait for: the test applies the manifest itself.
	if _, stderr, err := runCLI("install", "--root", s1.Root, "--kubeconfig", kc, "--wait=false"); err != nil {
		t.Fatalf("install on s1: %v\n%s", err, stderr)
	}
	applyManifest(t, ctx, dyn, s1.Manifest())

	// s2 cannot switch the mode: s1's manifest would say otherwise.
	_, _, err = runCLI("install", "--root", s2.Root, "--kubeconfig", kc, "--mode", "replaceDefault")
	if err == nil || !strings.Contains(err.Error(), "on server s1") || !strings.Contains(err.Error(), "global.schedulerMode") {
		t.Fatalf("replaceDefault on s2 before s1: err = %v, want a refusal naming s1 and the mode", err)
	}
	for _, f := range []string{s2.Manifest(), s2.DropIn()} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("refused install on s2 wrote %s", f)
		}
	}

	// s1 switches: helm-controller deploys the release, then s1 gets its drop-in.
	go func() {
		for ctx.Err() == nil {
			if data, _ := os.ReadFile(s1.Manifest()); bytes.Contains(data, []byte("schedulerMode: replaceDefault")) {
				applyManifest(t, ctx, dyn, s1.Manifest())
				if err := installAsHelmController(ctx, c, s1.Manifest()); err != nil {
					t.Errorf("helm-controller stand-in: %v", err)
				}
				return
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	stdout, stderr, err := runCLI("install", "--root", s1.Root, "--kubeconfig", kc, "--mode", "replaceDefault", "--timeout", "2m")
	if err != nil {
		t.Fatalf("replaceDefault on s1: %v\n%s\n%s", err, stdout, stderr)
	}
	wantLines(t, "replaceDefault on s1", stdout,
		"s1 (this host)  drop-in written, k3s not restarted",
		"s2              not converted: serves default-scheduler",
		"1. on s2, s3 (not converted): sudo ballast install --mode replaceDefault",
		"2. restart k3s on s1, s2, s3, one after another",
		"s3 goes last because its embedded scheduler holds the lease kube-system/kube-scheduler")
	if strings.Contains(stdout, "agent-1") {
		t.Errorf("an agent is listed as a server:\n%s", stdout)
	}

	// s2 follows: it writes only its drop-in and removes a copy of the manifest an earlier install left.
	copyOfManifest, err := os.ReadFile(s1.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s2.Manifest(), copyOfManifest, 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err = runCLI("install", "--root", s2.Root, "--kubeconfig", kc, "--mode", "replaceDefault", "--timeout", "1m")
	if err != nil {
		t.Fatalf("replaceDefault on s2: %v\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "Removed "+s2.Manifest()) || !strings.Contains(stdout, "1. on s1, s3 (not converted)") {
		t.Errorf("replaceDefault on s2 output:\n%s", stdout)
	}
	if _, err := os.Stat(s2.Manifest()); !os.IsNotExist(err) {
		t.Error("s2 keeps a copy of the HelmChart manifest")
	}
	if _, err := os.Stat(s2.DropIn()); err != nil {
		t.Errorf("s2 has no drop-in: %v", err)
	}

	// s1 and s2 restarted with their drop-in, s3 not yet.
	restartK3s(t, ctx, c, "s1", convertedArgs)
	restartK3s(t, ctx, c, "s2", convertedArgs)
	stdout, _, _ = runCLI("status", "--root", s2.Root, "--kubeconfig", kc, "--timeout", "20s")
	wantLines(t, "status", stdout,
		"lease kube-system/kube-scheduler held by s3",
		"s1              converted: drop-in in effect",
		"s2 (this host)  converted: drop-in in effect",
		"s3              not converted: serves default-scheduler",
		"warning: servers are partly converted")

	// Uninstalling from s2 first would leave s1's manifest to bring Ballast back when s1 starts.
	_, _, err = runCLI("uninstall", "--root", s2.Root, "--kubeconfig", kc, "--timeout", "20s")
	if err == nil || !strings.Contains(err.Error(), "run `sudo ballast uninstall` on s1 first") || !strings.Contains(err.Error(), "nothing changed") {
		t.Fatalf("uninstall on s2: err = %v, want a refusal naming s1", err)
	}
	if _, err := os.Stat(s2.DropIn()); err != nil {
		t.Errorf("refused uninstall removed s2's drop-in: %v", err)
	}
	if hc, err := k3s.GetHelmChart(ctx, dyn); err != nil || hc == nil || hc.DeletionTimestamp != nil {
		t.Errorf("refused uninstall deleted the HelmChart (%v)", err)
	}
}

// TestUninstallFinishesWithoutAScheduler: in replaceDefault mode
// helm-controller's uninstall Job asks for default-scheduler, which only
// Ballast serves. With no Ballast scheduler running at all, uninstall must
// still finish: it places the Job's pod itself, helm-controller uninstalls
// and releases its finalizer, and the drop-in goes.
func TestUninstallFinishesWithoutAScheduler(t *testing.T) {
	c, ctx := startCluster(t)
	installHelmChartCRD(t, ctx, c.RestConfig)
	dyn := dynamic.NewForConfigOrDie(c.RestConfig)
	addServers(t, ctx, c, map[string]string{"s1": convertedArgs, "s2": convertedArgs})
	holdSchedulerLease(t, ctx, c, "s1")
	s1 := serverRoot(t, "s1")
	deployed := func(context.Context, map[string]any) error { return nil }
	in := k3s.Installer{Paths: s1, Euid: func() int { return 0 }}
	if _, err := in.Install(ctx, k3s.InstallOptions{Mode: k3s.ModeReplaceDefault, ManifestNode: "s1", WaitForRelease: deployed}); err != nil {
		t.Fatal(err)
	}
	applyManifest(t, ctx, dyn, s1.Manifest(), helmControllerFinalizer)

	// helm-controller: once the HelmChart is deleted, its uninstall Job's pod
	// asks for default-scheduler; when the pod runs, the finalizer goes.
	boundTo := make(chan string, 1)
	go func() {
		res := dyn.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace)
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			u, err := res.Get(ctx, k3s.HelmChartName, metav1.GetOptions{})
			return err == nil && u.GetDeletionTimestamp() != nil, nil
		})
		if err != nil {
			t.Errorf("the HelmChart was never deleted: %v", err)
			return
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "helm-delete-ballast-x7k2p", Namespace: k3s.HelmChartNamespace,
				Labels: map[string]string{"helmcharts.helm.cattle.io/chart": k3s.HelmChartName}},
			Spec: corev1.PodSpec{
				NodeSelector: map[string]string{corev1.LabelOSStable: "linux"},
				Containers:   []corev1.Container{{Name: "helm", Image: "rancher/klipper-helm"}},
			},
		}
		if _, err := c.Client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Errorf("create the uninstall Job's pod: %v", err)
			return
		}
		var node string
		err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			p, err := c.Client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
			if err == nil {
				node = p.Spec.NodeName
			}
			return node != "", nil
		})
		boundTo <- node
		if err != nil {
			return // nothing placed the pod: helm-controller never uninstalls
		}
		if _, err := res.Patch(ctx, k3s.HelmChartName, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{}); err != nil {
			t.Errorf("release the finalizer: %v", err)
		}
	}()

	stdout, stderr, err := runCLI("uninstall", "--root", s1.Root, "--kubeconfig", c.KubeconfigPath(), "--timeout", "90s")
	if err != nil {
		t.Fatalf("uninstall: %v\n%s\n%s", err, stdout, stderr)
	}
	if node := <-boundTo; node != "s1" {
		t.Errorf("the uninstall Job's pod went to %q, want s1, the server uninstall runs on", node)
	}
	for _, f := range []string{s1.Manifest(), s1.DropIn(), s1.BootstrapSchedulerConfig()} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left behind", f)
		}
	}
	wantLines(t, "uninstall", stdout,
		"Removed the k3s scheduler drop-in",
		"1. on s2 (still converted): sudo ballast uninstall",
		"2. restart k3s on s2, s1, one after another")
}
