package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/installer/pkg/airgap"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

// TestK3sInstallFromImagesArchive: `ballast install --images DIR` on a k3s
// server places the archive of the server's architecture where k3s imports
// images, makes the chart pull exactly the images it holds (kept by later
// upgrades), tells what every other node needs, and uninstall removes it.
func TestK3sInstallFromImagesArchive(t *testing.T) {
	c, ctx := startCluster(t)
	installHelmChartCRD(t, ctx, c.RestConfig)
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "server-1", Arch: "amd64"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"pi-1", "pi-2"} {
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: n, Arch: "arm64"}); err != nil {
			t.Fatal(err)
		}
	}
	root := k3stest.ServerRoot(t)
	k3stest.KubeletCert(t, root, "server-1")
	paths := k3s.HostPaths(root)
	kc := c.KubeconfigPath()
	dir := t.TempDir()
	var tags []string
	for _, img := range []string{"load-watcher", "ballast-scheduler", "ballast-descheduler"} {
		tags = append(tags, "registry.home.lan/ballast/"+img+":0.2.0-dev")
	}
	k3stest.ImagesArchive(t, dir, airgap.ArchiveName("amd64"), "amd64", tags...)

	// An archive of another architecture than the server's is refused.
	wrong := k3stest.ImagesArchive(t, t.TempDir(), airgap.ArchiveName("arm64"), "arm64", tags...)
	if _, _, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--wait=false", "--images", wrong); err == nil ||
		!strings.Contains(err.Error(), "holds arm64 images") || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("install with an arm64 archive on an amd64 server: err = %v", err)
	}

	// An archive and a registry are two answers to where the images come from.
	if _, _, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--wait=false", "--images", dir, "--registry", "registry.home.lan/other"); err == nil ||
		!strings.Contains(err.Error(), "--registry") || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("install with --images and --registry: err = %v", err)
	}
	if _, found, _ := (k3s.Installer{Paths: paths}).PreviousValues(); found {
		t.Fatal("a refused install wrote the HelmChart")
	}

	stdout, stderr, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--wait=false", "--images", dir)
	if err != nil {
		t.Fatalf("install --images: %v\n%s", err, stderr)
	}
	placed := filepath.Join(paths.ImagesDir(), airgap.ArchiveName("amd64"))
	if _, err := os.Stat(placed); err != nil {
		t.Errorf("the archive is not where k3s imports images: %v", err)
	}
	wantLines(t, "install --images", stdout,
		"Placed "+placed,
		"pi-1, pi-2: ballast-images-linux-arm64.tar (build it with `make images PLATFORMS=linux/arm64`")
	if strings.Contains(stdout, "server-1:") {
		t.Errorf("install tells the server itself to copy the archive:\n%s", stdout)
	}
	vals, _, err := (k3s.Installer{Paths: paths}).PreviousValues()
	if err != nil {
		t.Fatal(err)
	}
	if values.Lookup(vals, "global", "image", "registry") != "registry.home.lan/ballast" || values.Lookup(vals, "global", "image", "tag") != "0.2.0-dev" {
		t.Errorf("HelmChart values %v: want the archive's registry and tag", vals)
	}

	// An upgrade without --images keeps pulling them.
	if _, stderr, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--wait=false", "--set", "descheduler.dryRun=true"); err != nil {
		t.Fatalf("upgrade: %v\n%s", err, stderr)
	}
	if vals, _, _ = (k3s.Installer{Paths: paths}).PreviousValues(); values.Lookup(vals, "global", "image", "tag") != "0.2.0-dev" {
		t.Errorf("an upgrade dropped the archive's tag: %v", vals)
	}

	// The HelmChart is not in the API (no k3s here), so uninstall only removes files.
	stdout, stderr, err = runCLI("uninstall", "--root", root, "--kubeconfig", kc, "--timeout", "20s")
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(placed); !os.IsNotExist(err) {
		t.Errorf("uninstall left the archive it placed (%v):\n%s", err, stdout)
	}

	// Images pushed to the user's registry instead (make push): the chart
	// pulls them from there.
	if _, stderr, err := runCLI("install", "--root", root, "--kubeconfig", kc, "--wait=false", "--registry", "registry.home.lan:5000/ballast/"); err != nil {
		t.Fatalf("install --registry: %v\n%s", err, stderr)
	}
	if vals, _, _ = (k3s.Installer{Paths: paths}).PreviousValues(); values.Lookup(vals, "global", "image", "registry") != "registry.home.lan:5000/ballast" {
		t.Errorf("HelmChart values after install --registry: %v", vals)
	}
}
