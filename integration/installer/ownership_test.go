package integration

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

// TestKubeconfigsAreOwnedWarnedOfAndRenewed runs `ballast kubeconfig`,
// `ballast status` and `ballast uninstall` against a real API server:
//   - a Secret of the default name that the user made is refused, and
//     nothing is created for it;
//   - a kubeconfig whose token ends within a week is warned of by status,
//     with the command that renews it, which renews it (Secret and file);
//   - uninstall (dry run, then for real) deletes what the command created
//     and leaves the user's Secret, saying so.
func TestKubeconfigsAreOwnedWarnedOfAndRenewed(t *testing.T) {
	c, ctx := startCluster(t)
	ns := charts.DefaultNamespace
	createNamespace(t, ctx, c.Client, ns)
	// The component's role, as the chart names it: the command binds to it.
	if _, err := c.Client.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: charts.ComponentFullname(charts.DefaultReleaseName, "load-watcher")},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"list"}}},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	theirs := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ballast-load-watcher-kubeconfig", Namespace: ns,
		Labels: map[string]string{"team": "infra"}}, StringData: map[string]string{"kubeconfig": "the user's own"}}
	if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kc := "--kubeconfig=" + c.KubeconfigPath()
	server := "--server=" + c.RestConfig.Host

	_, stderr, err := runCLI("kubeconfig", "load-watcher", kc, server)
	if err == nil || !strings.Contains(stderr, "was not created by ballast kubeconfig") || !strings.Contains(stderr, "--secret") {
		t.Fatalf("kubeconfig into the user's Secret: err = %v\n%s", err, stderr)
	}
	checkUsersSecret(t, ctx, c.Client.CoreV1().Secrets(ns))
	if _, err := c.Client.CoreV1().ServiceAccounts(ns).Get(ctx, kubeconfig.ServiceAccountName("ballast", "load-watcher"), metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a refused kubeconfig created its ServiceAccount anyway (%v)", err)
	}

	// One ending in three days, in a Secret; one in ten, in a file.
	file := filepath.Join(t.TempDir(), "lw.kubeconfig")
	if _, stderr, err := runCLI("kubeconfig", "load-watcher", kc, server, "--secret", "lw", "--duration", "72h"); err != nil {
		t.Fatalf("kubeconfig --secret lw: %v\n%s", err, stderr)
	}
	stdout, stderr, err := runCLI("kubeconfig", "load-watcher", kc, server, "--file", file, "--duration", "240h", "-o", "json")
	if err != nil || !strings.Contains(stdout, `"file": "`+file+`"`) {
		t.Fatalf("kubeconfig --file: %v\n%s\n%s", err, stdout, stderr)
	}

	stdout, stderr, _ = runCLI("status", kc, "--timeout", "20s")
	for _, want := range []string{"WARNING: the kubeconfig of load-watcher in Secret " + ns + "/lw ends in 2d23h", "renew it with: ballast kubeconfig load-watcher --renew"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("status does not warn %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, file) {
		t.Errorf("status warns of the file, which has ten days left:\n%s", stderr)
	}
	if !strings.Contains(stdout, "file "+file) {
		t.Errorf("status does not list the file:\n%s", stdout)
	}

	stdout, stderr, err = runCLI("kubeconfig", "load-watcher", "--renew", kc)
	if err != nil || !strings.Contains(stdout, "Renewed the kubeconfig of load-watcher in Secret "+ns+"/lw") ||
		!strings.Contains(stdout, "Renewed the kubeconfig of load-watcher in file "+file) {
		t.Fatalf("renew: %v\n%s\n%s", err, stdout, stderr)
	}
	creds, err := kubeconfig.List(ctx, c.Client, ns, "ballast")
	if err != nil || len(creds) != 2 {
		t.Fatalf("kubeconfigs after renewal: %+v, %v", creds, err)
	}
	for _, cr := range creds {
		if left := time.Until(cr.Expires); left < 71*time.Hour || left > 241*time.Hour {
			t.Errorf("%s after renewal ends in %s; want the lifetime it was asked for again", cr.Where(), left)
		}
	}
	if _, stderr, _ = runCLI("status", kc, "--timeout", "20s"); strings.Contains(stderr, "renew it") && strings.Contains(stderr, file) {
		t.Errorf("status warns after the renewal:\n%s", stderr)
	}

	stdout, stderr, err = runCLI("uninstall", "--helm", kc, "--dry-run")
	if err != nil || !strings.Contains(stdout, "Would delete 3 ServiceAccounts, bindings and Secrets") ||
		!strings.Contains(stdout, "Would leave Secret "+ns+"/ballast-load-watcher-kubeconfig: not created by ballast kubeconfig") {
		t.Fatalf("uninstall --dry-run: %v\n%s\n%s", err, stdout, stderr)
	}
	if _, err := c.Client.CoreV1().Secrets(ns).Get(ctx, "lw", metav1.GetOptions{}); err != nil {
		t.Fatalf("a dry run deleted: %v", err)
	}
	if _, stderr, err := runCLI("uninstall", "--helm", kc); err != nil {
		t.Fatalf("uninstall: %v\n%s", err, stderr)
	}
	checkUsersSecret(t, ctx, c.Client.CoreV1().Secrets(ns))
	if creds, err := kubeconfig.List(ctx, c.Client, ns, "ballast"); err != nil || len(creds) != 0 {
		t.Errorf("kubeconfigs left by uninstall: %+v, %v", creds, err)
	}
}

type secretGetter interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (*corev1.Secret, error)
}

func checkUsersSecret(t *testing.T, ctx context.Context, secrets secretGetter) {
	t.Helper()
	s, err := secrets.Get(ctx, "ballast-load-watcher-kubeconfig", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the user's Secret: %v", err)
	}
	if string(s.Data["kubeconfig"]) != "the user's own" || s.Labels["team"] != "infra" || len(s.Labels) != 1 {
		t.Errorf("the user's Secret was changed: %+v", s)
	}
}

// TestDryRunsAndWhatUninstallLeaves, against a real API server:
//   - install --helm --dry-run creates nothing, and has the server judge
//     every object (those of a namespace that does not exist yet are said);
//   - on a k3s server, a HelmChart named ballast and a manifest ballast.yaml
//     that ballast install did not write are left by uninstall, which says
//     so; its dry run deletes nothing either.
func TestDryRunsAndWhatUninstallLeaves(t *testing.T) {
	c, ctx := startCluster(t)
	kc := "--kubeconfig=" + c.KubeconfigPath()

	stdout, stderr, err := runCLI("install", "--helm", kc, "--dry-run")
	if err != nil {
		t.Fatalf("install --helm --dry-run: %v\n%s\n%s", err, stdout, stderr)
	}
	for _, want := range []string{"Dry run: nothing written; would install release ballast in namespace ballast-system",
		"Server-side dry run: the API server accepts", "create    ClusterRole ballast-scheduler",
		"Not sent, checked offline only:", "namespace ballast-system does not exist yet"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("install --dry-run lacks %q:\n%s", want, stdout)
		}
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, charts.DefaultNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry run created the namespace (%v)", err)
	}
	if crs, _ := c.Client.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/part-of=ballast"}); len(crs.Items) != 0 {
		t.Errorf("a dry run created %d ClusterRoles", len(crs.Items))
	}
	// With the namespace there, every object is sent.
	createNamespace(t, ctx, c.Client, charts.DefaultNamespace)
	stdout, stderr, err = runCLI("install", "--helm", kc, "--dry-run", "--set", "descheduler.dryRun=true")
	if err != nil || strings.Contains(stdout, "Not sent") || !strings.Contains(stdout, "create    Deployment ballast-system/ballast-scheduler") {
		t.Errorf("install --dry-run into an existing namespace: %v\n%s\n%s", err, stdout, stderr)
	}

	installHelmChartCRD(t, ctx, c.RestConfig)
	dyn := dynamic.NewForConfigOrDie(c.RestConfig)
	theirs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "helm.cattle.io/v1", "kind": "HelmChart",
		"metadata": map[string]any{"name": k3s.HelmChartName, "namespace": k3s.HelmChartNamespace},
		"spec":     map[string]any{"chart": "oci://example.org/charts/ballast-ui", "targetNamespace": "ui"},
	}}
	if _, err := dyn.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace).Create(ctx, theirs, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	root := k3stest.ServerRoot(t)
	manifest := k3s.HostPaths(root).Manifest()
	if err := os.WriteFile(manifest, []byte("# the user's own HelmChart\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--dry-run"}, nil} {
		stdout, stderr, err := runCLI(append([]string{"uninstall", "--root", root, kc, "--timeout", "20s"}, args...)...)
		if err != nil {
			t.Fatalf("uninstall %v: %v\n%s", args, err, stderr)
		}
		for _, want := range []string{"HelmChart kube-system/ballast: it was not written by ballast install",
			manifest + " (HelmChart manifest): it was not written by ballast install"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("uninstall %v does not say %q:\n%s", args, want, stdout)
			}
		}
		if _, err := dyn.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace).Get(ctx, k3s.HelmChartName, metav1.GetOptions{}); err != nil {
			t.Fatalf("uninstall %v deleted the user's HelmChart: %v", args, err)
		}
		if data, err := os.ReadFile(manifest); err != nil || string(data) != "# the user's own HelmChart\n" {
			t.Fatalf("uninstall %v touched the user's manifest: %q, %v", args, data, err)
		}
	}
}
