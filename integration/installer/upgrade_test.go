package integration

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	helmv1 "github.com/k3s-io/helm-controller/pkg/apis/helm.cattle.io/v1"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

// TestInstallRefusesAnOlderAPIServer: Ballast's scheduler is built on
// Kubernetes 1.36 and a kube-scheduler must never be newer than its API
// server. An API server serving 1.35 is refused on both install paths before
// anything is written; --allow-version-skew installs anyway, and the
// namespace opt-in policy, whose API 1.35 does not serve, is left out and
// NOTES say so.
func TestInstallRefusesAnOlderAPIServer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c, err := cluster.Start(t, cluster.Options{APIServerFlags: []string{"--emulated-version=1.35"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	v, err := c.Client.Discovery().ServerVersion()
	if err != nil || v.EmulationMinor != "35" {
		t.Fatalf("API server version %+v (%v), want it to emulate 1.35", v, err)
	}

	_, stderr, err := runCLI("install", "--helm", "--kubeconfig", c.KubeconfigPath(), "--timeout", "30s")
	if err == nil || !strings.Contains(err.Error(), "1.35") || !strings.Contains(err.Error(), "--allow-version-skew") ||
		!strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("Helm install on 1.35: err = %v, want a refusal naming 1.35 and the override\n%s", err, stderr)
	}
	if _, err := c.Client.CoreV1().Namespaces().Get(ctx, charts.DefaultNamespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s exists after a refused install (err %v)", charts.DefaultNamespace, err)
	}

	root := k3stest.ServerRoot(t)
	_, _, err = runCLI("install", "--root", root, "--kubeconfig", c.KubeconfigPath())
	if err == nil || !strings.Contains(err.Error(), "1.35") {
		t.Fatalf("k3s install on 1.35: err = %v, want a refusal", err)
	}
	if entries, _ := os.ReadDir(k3s.HostPaths(root).ManifestsDir()); len(entries) != 0 {
		t.Errorf("refused install wrote %v", entries)
	}

	// The override: the HelmChart carries a chart without the constraint, or helm-controller would refuse it.
	stdout, stderr, err := runCLI("install", "--root", root, "--kubeconfig", c.KubeconfigPath(), "--allow-version-skew")
	if err != nil {
		t.Fatalf("k3s install with --allow-version-skew: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "unsupported") {
		t.Errorf("the override is not announced:\n%s%s", stdout, stderr)
	}
	// 1.35 serves MutatingAdmissionPolicy only as a beta behind a gate: k3s is told to turn it on.
	if _, err := os.Stat(k3s.HostPaths(root).AdmissionPolicyDropIn()); err != nil || !strings.Contains(stdout, "restart k3s") {
		t.Errorf("no admission policy gate drop-in (%v) or no restart asked:\n%s", err, stdout)
	}
	content, err := readHelmChart(k3s.HostPaths(root).Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if kv := content.chart.Metadata.KubeVersion; kv != "" {
		t.Errorf("skewed HelmChart still carries kubeVersion %q", kv)
	}

	// Helm path with the override: Ballast rolls out; no opt-in policy, and NOTES say why.
	addNodes(t, ctx, c, "node-a")
	if _, err := c.StartScheduler(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, err = runCLI("install", "--helm", "--kubeconfig", c.KubeconfigPath(), "--allow-version-skew", "--timeout", "3m")
	if err != nil {
		t.Fatalf("Helm install with --allow-version-skew: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "Namespace opt-in is off") {
		t.Errorf("NOTES do not say the opt-in policy is off:\n%s", stdout)
	}
	stdout, _, _ = runCLI("status", "--kubeconfig", c.KubeconfigPath(), "--timeout", "20s")
	if !strings.Contains(stdout, "namespace opt-in: off: this API server does not serve MutatingAdmissionPolicy") {
		t.Errorf("status does not say the opt-in policy is off:\n%s", stdout)
	}
}

// TestUpgradeKeepsValuesAndMode: running `ballast install` again applies the
// new values on top of the last install's, keeps replaceDefault without
// --mode, prints what changed; --reset-values starts over. On both paths.
func TestUpgradeKeepsValuesAndMode(t *testing.T) {
	c, ctx := startCluster(t)
	addNodes(t, ctx, c, "node-a", "node-b")
	// The cluster's scheduler renamed, as replaceDefault needs: it places Ballast's own pods.
	if _, err := c.StartScheduler(ctx, "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n  - schedulerName: ballast-bootstrap\n", nil); err != nil {
		t.Fatal(err)
	}
	kc := c.KubeconfigPath()
	install := func(args ...string) string {
		t.Helper()
		stdout, stderr, err := runCLI(append([]string{"install", "--helm", "--kubeconfig", kc, "--timeout", "3m"}, args...)...)
		if err != nil {
			t.Fatalf("install %v: %v\n%s\n%s", args, err, stdout, stderr)
		}
		return stdout
	}
	released := func() map[string]any {
		t.Helper()
		vals, found, err := helminstall.PreviousValues(helminstall.Options{Getter: helmGetter(c, charts.DefaultNamespace),
			ReleaseName: charts.DefaultReleaseName, Namespace: charts.DefaultNamespace})
		if err != nil || !found {
			t.Fatalf("release values: found=%t err=%v", found, err)
		}
		return vals
	}

	install("--mode", "replaceDefault", "--set", "descheduler.dryRun=true")
	out := install("--set", "scheduler.logLevel=4")
	for _, want := range []string{"mode replaceDefault", "+ scheduler.logLevel: 4"} {
		if !strings.Contains(out, want) {
			t.Errorf("upgrade output lacks %q:\n%s", want, out)
		}
	}
	vals := released()
	if got := values.Lookup(vals, "global", "schedulerMode"); got != "replaceDefault" {
		t.Errorf("upgrade without --mode: schedulerMode %v, want replaceDefault kept", got)
	}
	if got := values.Lookup(vals, "descheduler", "dryRun"); got != true {
		t.Errorf("upgrade lost descheduler.dryRun: %v", got)
	}
	if got := values.Lookup(vals, "scheduler", "logLevel"); got != float64(4) && got != int64(4) {
		t.Errorf("upgrade did not apply scheduler.logLevel: %v", got)
	}

	out = install("--reset-values", "--mode", "replaceDefault")
	if !strings.Contains(out, "- descheduler.dryRun: true") {
		t.Errorf("--reset-values output does not show the dropped value:\n%s", out)
	}
	if got := values.Lookup(released(), "descheduler", "dryRun"); got != nil {
		t.Errorf("--reset-values kept descheduler.dryRun=%v", got)
	}

	// The k3s path keeps values the same way (its HelmChart holds them).
	root := k3stest.ServerRoot(t)
	// No helm-controller here: install writes the HelmChart and returns.
	if _, stderr, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--wait=false", "--set", "load-watcher.period=30s"); err != nil {
		t.Fatalf("k3s install: %v\n%s", err, stderr)
	}
	stdout, stderr, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--wait=false", "--set", "descheduler.dryRun=true")
	if err != nil {
		t.Fatalf("k3s upgrade: %v\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "+ descheduler.dryRun: true") || strings.Contains(stdout, "load-watcher.period") {
		t.Errorf("k3s upgrade output:\n%s", stdout)
	}
	prev, _, err := (k3s.Installer{Paths: k3s.HostPaths(root)}).PreviousValues()
	if err != nil {
		t.Fatal(err)
	}
	if values.Lookup(prev, "load-watcher", "period") != "30s" || values.Lookup(prev, "descheduler", "dryRun") != true {
		t.Errorf("k3s HelmChart values after upgrade: %v", prev)
	}
}

// TestReplaceDefaultOnK3sNeverStrandsTheInstallJob plays k3s: helm-controller
// installs the HelmChart some time after `ballast install --mode
// replaceDefault` wrote it. The scheduler drop-in (which renames k3s's
// scheduler on its next start, so the install Job's default-scheduler pod
// would never run) must appear only after the release is deployed; then a
// restart of the cluster's scheduler with it places every Ballast pod.
func TestReplaceDefaultOnK3sNeverStrandsTheInstallJob(t *testing.T) {
	c, ctx := startCluster(t)
	addNodes(t, ctx, c, "node-a")
	root := k3stest.ServerRoot(t)
	paths := k3s.HostPaths(root)

	dropInBeforeRelease := make(chan bool, 1)
	go func() {
		for ctx.Err() == nil {
			if _, err := os.Stat(paths.Manifest()); err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			time.Sleep(3 * time.Second) // the install Job takes a while to start
			_, statErr := os.Stat(paths.DropIn())
			dropInBeforeRelease <- statErr == nil
			if err := installAsHelmController(ctx, c, paths.Manifest()); err != nil {
				t.Errorf("helm-controller stand-in: %v", err)
			}
			return
		}
	}()

	stdout, stderr, err := runCLI("install", "--root", root, "--kubeconfig", c.KubeconfigPath(), "--mode", "replaceDefault", "--timeout", "2m")
	if err != nil {
		t.Fatalf("install: %v\n%s\n%s", err, stdout, stderr)
	}
	if <-dropInBeforeRelease {
		t.Error("the scheduler drop-in was written before helm-controller deployed the release")
	}
	if !strings.Contains(stdout, "restart k3s") {
		t.Errorf("install does not ask for the restart:\n%s", stdout)
	}
	if !strings.Contains(stderr, "helm-controller") {
		t.Errorf("install printed no progress while waiting:\n%s", stderr)
	}
	bootstrap, err := os.ReadFile(paths.BootstrapSchedulerConfig())
	if err != nil {
		t.Fatalf("no bootstrap scheduler config after install: %v", err)
	}

	// "Restart k3s": its scheduler comes back with the drop-in's configuration.
	if _, err := c.StartScheduler(ctx, string(bootstrap), nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "every Ballast pod to be placed", 90*time.Second, func(ctx context.Context) (bool, error) {
		pods, err := c.Client.CoreV1().Pods(charts.DefaultNamespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) < 3 {
			return false, err
		}
		for _, p := range pods.Items {
			if p.Spec.NodeName == "" {
				return false, nil
			}
		}
		return true, nil
	})
}

// helmChartContent is what a HelmChart manifest carries.
type helmChartContent struct {
	hc      *helmv1.HelmChart
	archive []byte
	chart   *chart.Chart
	values  map[string]any
}

// readHelmChart decodes the HelmChart manifest `ballast install` wrote.
func readHelmChart(path string) (helmChartContent, error) {
	var out helmChartContent
	data, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	if out.hc, err = k3s.DecodeHelmChart(data); err != nil {
		return out, err
	}
	if out.archive, err = k3s.ChartArchive(out.hc); err != nil {
		return out, err
	}
	if out.chart, err = loader.LoadArchive(bytes.NewReader(out.archive)); err != nil {
		return out, err
	}
	out.values = map[string]any{}
	err = yaml.Unmarshal([]byte(out.hc.Spec.ValuesContent), &out.values)
	return out, err
}

// installAsHelmController installs a HelmChart manifest's chart and values
// as helm-controller's Job does: helm install, without waiting for readiness.
func installAsHelmController(ctx context.Context, c *cluster.Cluster, manifest string) error {
	content, err := readHelmChart(manifest)
	if err != nil {
		return err
	}
	hc := content.hc
	ns := hc.Spec.TargetNamespace
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	cfg := &action.Configuration{}
	if err := cfg.Init(helmGetter(c, ns), ns, "secret", func(string, ...any) {}); err != nil {
		return err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = hc.Name, ns
	_, err = in.RunWithContext(ctx, content.chart, content.values)
	return err
}

func addNodes(t *testing.T, ctx context.Context, c *cluster.Cluster, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: n, CPU: "4", Memory: "8Gi"}); err != nil {
			t.Fatal(err)
		}
	}
}
