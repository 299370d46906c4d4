package integration

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

// TestK3sInstallWaitsUntilReady: on k3s, `ballast install` returns once
// helm-controller has deployed the release and every component is Ready,
// showing what it waits for; when nothing deploys it, it says so plainly
// after --timeout. Here a stand-in plays helm-controller's Job with the Helm
// SDK; the k3s lane runs the real one (docs/e2e.md).
func TestK3sInstallWaitsUntilReady(t *testing.T) {
	c, ctx := startCluster(t)
	installHelmChartCRD(t, ctx, c.RestConfig)
	addNodes(t, ctx, c, "server-1")
	if _, err := c.StartScheduler(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	root := k3stest.ServerRoot(t)
	k3stest.KubeletCert(t, root, "server-1")
	kc := c.KubeconfigPath()

	// Nobody deploys the HelmChart: the wait ends with what is missing.
	_, _, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--timeout", "4s")
	if err == nil || !strings.Contains(err.Error(), "not deployed within 4s") || !strings.Contains(err.Error(), "no Job "+k3s.InstallJobName+" yet") {
		t.Fatalf("install with no helm-controller: err = %v, want the release not deployed and no install Job", err)
	}

	// status says where helm-controller is, rather than only that nothing runs.
	out, _, err := runCLI("status", "--root", root, "--kubeconfig", kc, "--timeout", "10s")
	if err == nil || !strings.Contains(out, "k3s's helm-controller: no Job "+k3s.InstallJobName+" yet") {
		t.Errorf("status while helm-controller has not started: err = %v, want it to say so:\n%s", err, out)
	}

	// helm-controller deploys it a moment after the file is there.
	manifest := k3s.HostPaths(root).Manifest()
	go func() {
		time.Sleep(3 * time.Second)
		if err := installAsHelmController(ctx, c, manifest); err != nil {
			t.Errorf("helm-controller stand-in: %v", err)
		}
	}()
	stdout, stderr, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--timeout", "3m")
	if err != nil {
		t.Fatalf("install: %v\n%s\n%s", err, stdout, stderr)
	}
	t.Logf("install:\n%s%s", stderr, stdout)
	if !strings.Contains(stderr, "helm-controller: no release yet; no Job "+k3s.InstallJobName+" yet") || !strings.Contains(stderr, "✓ Ballast's components are Ready") {
		t.Errorf("install showed no progress while it waited:\n%s", stderr)
	}
	if !strings.Contains(stdout, "Ballast is ready in namespace "+charts.DefaultNamespace) {
		t.Errorf("install does not say Ballast is ready:\n%s", stdout)
	}
	r, err := helminstall.CheckReadiness(context.Background(), c.Client, charts.DefaultNamespace, k3s.HelmChartName)
	if err != nil || !r.Done() || r.Total != len(charts.Components) {
		t.Errorf("after install returned: %s (%v); want every component ready", r, err)
	}
	if _, err := os.Stat(manifest); err != nil {
		t.Errorf("no manifest: %v", err)
	}
}
