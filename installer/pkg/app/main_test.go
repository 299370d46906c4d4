package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

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
	if err == nil || !strings.Contains(stderr, "ERROR: ballast needs a subcommand: one of ") {
		t.Fatalf("err = %v, stderr:\n%s", err, stderr)
	}
}

// A mistyped command gets the nearest one, as kubectl does.
func TestMistypedCommandsGetASuggestion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"instal"}, "did you mean install?"},
		{[]string{"unistall"}, "uninstall?"},
		{[]string{"explain", "nod", "pi-3"}, "did you mean"},
		{[]string{"explain"}, "ballast explain needs a subcommand: one of node, pod"},
	} {
		_, stderr, err := run(t, tc.args...)
		if err == nil || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: err = %v, want %q in:\n%s", tc.args, err, tc.want, stderr)
		}
	}
}

// --version is the root's: on a subcommand it is refused, never ignored
// while the subcommand runs.
func TestVersionFlagOnASubcommandIsRefused(t *testing.T) {
	stdout, stderr, err := run(t, "render", "--version")
	if err == nil || !strings.Contains(stderr, "unknown flag: --version") || stdout != "" {
		t.Fatalf("render --version: err = %v, stdout %.200q, stderr %s", err, stdout, stderr)
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
	for _, format := range []string{"json", "yaml"} {
		stdout, stderr, err := run(t, "version", "-o", format)
		if err != nil {
			t.Fatalf("version -o %s: %v\n%s", format, err, stderr)
		}
		var got version.Info
		if err := yaml.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("version -o %s printed %q: %v", format, stdout, err)
		}
		if want := version.Get("ballast"); got != want {
			t.Errorf("version -o %s: %+v, want %+v", format, got, want)
		}
	}
	if _, stderr, err := run(t, "version", "-o", "wide"); err == nil || !strings.Contains(stderr, "want json or yaml") {
		t.Errorf("version -o wide: err = %v\n%s", err, stderr)
	}
}

// -o is a format on every command: the kubeconfig's file is --file, and
// the old use says so.
func TestKubeconfigFileIsNotOutput(t *testing.T) {
	_, stderr, err := run(t, "kubeconfig", "load-watcher", "-o", "lw.kubeconfig")
	if err == nil || !strings.Contains(stderr, "use --file lw.kubeconfig") {
		t.Fatalf("err = %v\n%s", err, stderr)
	}
}

func TestRender(t *testing.T) {
	stdout, _, err := run(t, "render", "--set", "descheduler.enabled=false", "--ballast-namespace", "sched")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "kind: Deployment") || !strings.Contains(stdout, "namespace: sched") {
		t.Errorf("render output lacks the Deployments in namespace sched:\n%.500s", stdout)
	}
	// -n, Ballast's namespace before --ballast-namespace, still works, and
	// says what to use.
	aliased, stderr, err := run(t, "render", "--set", "descheduler.enabled=false", "-n", "sched")
	if err != nil || aliased != stdout || !strings.Contains(stderr, "use --ballast-namespace") {
		t.Errorf("render -n sched: err %v, same output %t, stderr:\n%s", err, aliased == stdout, stderr)
	}
	// (The scheduler still names the descheduler's moves ConfigMap,
	// ballast-descheduler-moves, which it reads if it exists.)
	if strings.Contains(stdout, "name: ballast-descheduler\n") {
		t.Error("descheduler rendered although disabled")
	}

	stdout, stderr, err = run(t, "render", "--set", "scheduler.plugins.loadAware.thresholds.cpu=101")
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

	// Asked to wait (the default) and unable to see the cluster: the
	// HelmChart is written, and the command fails saying so.
	stdout, stderr, err := run(t, "install", "--root", root, "--kubeconfig", unreachable, "--set", "descheduler.dryRun=true")
	if err == nil {
		t.Fatalf("install that cannot wait for Ballast exited zero:\n%s\n%s", stdout, stderr)
	}
	for _, want := range []string{"WARNING: cannot load the kubeconfig " + unreachable, "cannot wait for Ballast to be ready", "--wait=false"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "Wrote "+manifest) {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, err := os.Stat(manifest); err != nil {
		t.Fatal(err)
	}

	stdout, _, err = run(t, "install", "--root", root, "--kubeconfig", unreachable, "--set", "descheduler.dryRun=true", "--wait=false", "-q")
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

// install --dry-run on a k3s server says what it would write, and writes
// nothing: not the HelmChart, not an images archive, not the lock.
func TestInstallDryRunOnK3sWritesNothing(t *testing.T) {
	root := k3stest.ServerRoot(t)
	unreachable := filepath.Join(t.TempDir(), "missing-kubeconfig")
	manifest := k3s.HostPaths(root).Manifest()
	before := files(t, root)

	stdout, stderr, err := run(t, "install", "--root", root, "--kubeconfig", unreachable, "--dry-run", "--mode", "replaceDefault")
	if err != nil {
		t.Fatalf("install --dry-run: %v\n%s", err, stderr)
	}
	for _, want := range []string{"Dry run: nothing written.", "Would write " + manifest, "would write the k3s scheduler drop-in"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if diff := cmp.Diff(before, files(t, root)); diff != "" {
		t.Errorf("a dry run changed the host (-before,+after):\n%s", diff)
	}

	// Invalid values are refused as without --dry-run.
	if _, stderr, err := run(t, "install", "--root", root, "--kubeconfig", unreachable, "--dry-run", "--set", "load-watcher.provider=datadog"); err == nil ||
		!strings.Contains(stderr, "/load-watcher/provider") {
		t.Errorf("a dry run accepted invalid values: %v\n%s", err, stderr)
	}
}

// On k3s the release is the HelmChart's, named ballast: another name is
// refused with what to do, before anything is written.
func TestReleaseNameOnK3s(t *testing.T) {
	root := k3stest.ServerRoot(t)
	for _, cmd := range []string{"install", "uninstall"} {
		_, stderr, err := run(t, cmd, "--root", root, "--release-name", "other", "--kubeconfig", filepath.Join(t.TempDir(), "missing"))
		if err == nil || !strings.Contains(stderr, "--release-name=other") || !strings.Contains(stderr, "--helm") {
			t.Errorf("%s --release-name other: err = %v\n%s", cmd, err, stderr)
		}
	}
	if _, err := os.Stat(k3s.HostPaths(root).Manifest()); !os.IsNotExist(err) {
		t.Errorf("a refused install wrote the manifest: %v", err)
	}
}

// files lists every file under root with its content.
func files(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(path)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
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
