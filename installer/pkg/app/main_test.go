package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/core/version"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = Run(log.New(&errOut), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), err
}

func TestNoSubcommandIsAnError(t *testing.T) {
	_, stderr, err := run(t)
	if err == nil || !strings.Contains(stderr, "ERROR: missing subcommand") {
		t.Fatalf("err = %v, stderr:\n%s", err, stderr)
	}
}

// TestSimEndsWithThePluginsStatus: `ballast sim` runs ballast-sim with every
// argument, global flags included, and ends with its status without adding
// an error of its own to what the plugin printed.
func TestSimEndsWithThePluginsStatus(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake plugin is a shell script")
	}
	dir := t.TempDir()
	plugin := "#!/bin/sh\necho \"ran with $*\"\necho 'ERROR: no such scenario' >&2\nexit 4\n"
	if err := os.WriteFile(filepath.Join(dir, "ballast-sim"), []byte(plugin), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir)
	stdout, stderr, err := run(t, "-q", "sim", "--scenario", "x")
	if got := cli.ExitCode(err); got != 4 {
		t.Errorf("exit code %d (err %v), want the plugin's 4", got, err)
	}
	if stdout != "ran with -q --scenario x\n" {
		t.Errorf("stdout = %q", stdout)
	}
	if stderr != "ERROR: no such scenario\n" {
		t.Errorf("stderr = %q, want the plugin's error alone", stderr)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}} {
		stdout, stderr, err := run(t, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		// A test binary is linked without -X: the version is the default.
		if want := version.Line("ballast") + "\n"; stdout != want || !strings.HasPrefix(stdout, "ballast dev") {
			t.Errorf("%v printed %q, want %q", args, stdout, want)
		}
	}
}

func TestRender(t *testing.T) {
	stdout, _, err := run(t, "render", "--set", "descheduler.enabled=false", "-n", "sched")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "kind: Deployment") || !strings.Contains(stdout, "namespace: sched") {
		t.Errorf("render output lacks the Deployments in namespace sched:\n%.500s", stdout)
	}
	// (The scheduler still names the descheduler's moves ConfigMap,
	// ballast-descheduler-moves, which it reads if it exists.)
	if strings.Contains(stdout, "name: ballast-descheduler\n") {
		t.Error("descheduler rendered although disabled")
	}

	stdout, stderr, err := run(t, "render", "--set", "scheduler.plugins.loadAware.thresholds.cpu=101")
	if err == nil {
		t.Fatal("out-of-range threshold accepted")
	}
	if stdout != "" {
		t.Errorf("stdout not empty on error:\n%.300s", stdout)
	}
	if !strings.Contains(stderr, "/scheduler/plugins/loadAware/thresholds/cpu") {
		t.Errorf("stderr does not name the field:\n%s", stderr)
	}
}

func TestRenderArchive(t *testing.T) {
	stdout, _, err := run(t, "render", "--archive")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix([]byte(stdout), []byte{0x1f, 0x8b}) {
		t.Error("--archive did not print a gzip stream")
	}
}

func TestInstallOnK3sWithoutAPIAccess(t *testing.T) {
	root := k3stest.ServerRoot(t)
	unreachable := filepath.Join(t.TempDir(), "missing-kubeconfig")
	manifest := k3s.HostPaths(root).Manifest()

	stdout, stderr, err := run(t, "install", "--root", root, "--kubeconfig", unreachable, "--set", "descheduler.dryRun=true")
	if err != nil {
		t.Fatalf("install: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "WARNING: cannot reach the cluster") {
		t.Errorf("no warning about the unreachable API:\n%s", stderr)
	}
	if !strings.Contains(stdout, "Wrote "+manifest) {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, err := os.Stat(manifest); err != nil {
		t.Fatal(err)
	}

	stdout, _, err = run(t, "install", "--root", root, "--kubeconfig", unreachable, "--set", "descheduler.dryRun=true", "-q")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "already up to date") {
		t.Errorf("second install:\n%s", stdout)
	}

	before, _ := os.ReadFile(manifest)
	_, stderr, err = run(t, "install", "--root", root, "--kubeconfig", unreachable, "--set", "load-watcher.provider=datadog")
	if err == nil || !strings.Contains(stderr, "/load-watcher/provider") {
		t.Fatalf("bad provider: err=%v\n%s", err, stderr)
	}
	if after, _ := os.ReadFile(manifest); !bytes.Equal(before, after) {
		t.Error("a rejected install changed the manifest")
	}
}

func TestInstallRejectsUnknownMode(t *testing.T) {
	_, stderr, err := run(t, "install", "--root", k3stest.ServerRoot(t), "--mode", "exclusive")
	if err == nil || !strings.Contains(stderr, "--mode=exclusive") {
		t.Fatalf("err = %v\n%s", err, stderr)
	}
}

func TestSchedulerModeFromValues(t *testing.T) {
	root := k3stest.ServerRoot(t)
	unreachable := filepath.Join(t.TempDir(), "missing-kubeconfig")
	// replaceDefault from the values: the HelmChart is written in that mode, but with the cluster out of reach
	// nothing shows helm-controller deployed it, so the drop-in (which renames k3s's scheduler) must wait.
	stdout, stderr, err := run(t, "install", "--root", root, "--kubeconfig", unreachable, "--set", "global.schedulerMode=replaceDefault")
	if !errors.Is(err, k3s.ErrDropInNotWritten) {
		t.Fatalf("err = %v, want ErrDropInNotWritten\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "Replace mode is not complete") || !strings.Contains(stdout, "run this\ncommand again") {
		t.Errorf("install does not say what is left to do:\n%s", stdout)
	}
	prev, _, err := (k3s.Installer{Paths: k3s.HostPaths(root)}).PreviousValues()
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := prev["global"].(map[string]any); g["schedulerMode"] != "replaceDefault" {
		t.Errorf("HelmChart values %v, want replaceDefault from the values", prev)
	}
	if _, err := os.Stat(k3s.HostPaths(root).DropIn()); !os.IsNotExist(err) {
		t.Errorf("drop-in written without helm-controller having deployed the release: %v", err)
	}

	_, stderr, err = run(t, "install", "--root", root, "--kubeconfig", unreachable, "--mode", "second", "--set", "global.schedulerMode=replaceDefault")
	if err == nil || !strings.Contains(stderr, "contradicts global.schedulerMode=replaceDefault") {
		t.Fatalf("contradicting mode accepted: err=%v\n%s", err, stderr)
	}
}
