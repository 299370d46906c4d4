package k3s

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Uninstall removes only the files Ballast wrote: a manifest, drop-ins of
// Ballast's names that someone else wrote are left, and said, and the
// uninstall does not fail on them.
func TestUninstallLeavesFilesThatAreNotBallasts(t *testing.T) {
	p := fakeK3sServer(t)
	theirs := map[string]string{
		p.Manifest():              "apiVersion: helm.cattle.io/v1\nkind: HelmChart\nmetadata: {name: ballast}\n",
		p.DropIn():                "kube-scheduler-arg:\n  - v=4\n",
		p.AdmissionPolicyDropIn(): "kube-apiserver-arg:\n  - v=2\n",
	}
	for path, data := range theirs {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := tree(t, p.Root)
	in := Installer{Paths: p, Euid: root()}
	plan, err := in.PlanUninstall()
	if err != nil {
		t.Fatal(err)
	}
	if removed := plan.Removed(""); len(removed) != 0 || plan.ManifestOurs || plan.RestartK3s {
		t.Errorf("plan removes %v (manifest ours %t, restart %t); want nothing", removed, plan.ManifestOurs, plan.RestartK3s)
	}
	res, err := in.Uninstall(context.Background(), func(context.Context) error { return nil })
	if err != nil {
		t.Fatalf("uninstall failed on files that are not Ballast's: %v", err)
	}
	if res.ManifestRemoved || res.DropInRemoved || res.RestartK3s || len(res.Left) != 3 {
		t.Errorf("result %+v; want nothing removed, three files left", res)
	}
	for _, l := range res.Left {
		if !strings.Contains(l.Why, "not written by ballast") {
			t.Errorf("left %s: %q does not say why", l.Path, l.Why)
		}
	}
	if diff := cmp.Diff(before, tree(t, p.Root)); diff != "" {
		t.Errorf("uninstall changed files that are not Ballast's (-before,+after):\n%s", diff)
	}
}

// An archive install placed and someone replaced since is theirs now: it
// is left; the one placed and untouched goes.
func TestUninstallLeavesAnImagesArchiveThatChanged(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	dir := t.TempDir()
	for _, name := range []string{"ballast-images-linux-amd64.tar", "ballast-images-linux-arm64.tar"} {
		archive := filepath.Join(dir, name)
		if err := os.WriteFile(archive, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Install(context.Background(), InstallOptions{Images: archive}); err != nil {
			t.Fatal(err)
		}
	}
	changed := filepath.Join(p.ImagesDir(), "ballast-images-linux-arm64.tar")
	if err := os.WriteFile(changed, []byte("someone else's images"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := in.Uninstall(context.Background(), func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(p.ImagesDir(), "ballast-images-linux-amd64.tar")}; !cmp.Equal(want, res.ImagesRemoved) {
		t.Errorf("removed %v, want %v", res.ImagesRemoved, want)
	}
	if len(res.Left) != 1 || res.Left[0].Path != changed || !strings.Contains(res.Left[0].Why, "changed since") {
		t.Errorf("left %+v, want %s, changed", res.Left, changed)
	}
	if got, _ := os.ReadFile(changed); string(got) != "someone else's images" {
		t.Errorf("the changed archive holds %q", got)
	}
}

// A record an older ballast wrote, without checksums: the archives of
// Ballast's names go, another file named there stays.
func TestUninstallReadsAnOlderImagesRecord(t *testing.T) {
	p := fakeK3sServer(t)
	ours := filepath.Join(p.ImagesDir(), "ballast-images-linux-amd64.tar")
	other := filepath.Join(p.ImagesDir(), "k3s-airgap-images-amd64.tar")
	for _, f := range []string{ours, other} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(p.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.PlacedImages(), []byte(ours+"\n"+other+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Installer{Paths: p, Euid: root()}.Uninstall(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cmp.Equal([]string{ours}, res.ImagesRemoved) || len(res.Left) != 1 || res.Left[0].Path != other {
		t.Errorf("removed %v, left %+v", res.ImagesRemoved, res.Left)
	}
}

// A dry run validates, says what it would write, and writes nothing: not
// the manifest, not the drop-ins, not the images, not the lock.
func TestInstallDryRunWritesNothing(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	archive := filepath.Join(t.TempDir(), "ballast-images-linux-amd64.tar")
	if err := os.WriteFile(archive, []byte("images"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := tree(t, p.Root)
	res, err := in.Install(context.Background(), InstallOptions{Mode: ModeReplaceDefault, Images: archive, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, tree(t, p.Root)); diff != "" {
		t.Errorf("a dry run changed the host (-before,+after):\n%s", diff)
	}
	if _, err := os.Stat(p.StateDir()); !os.IsNotExist(err) {
		t.Errorf("a dry run made Ballast's state directory: %v", err)
	}
	want := []string{"would copy " + archive + " to " + filepath.Join(p.ImagesDir(), filepath.Base(archive)), "would write " + p.Manifest()}
	if diff := cmp.Diff(want, res.Changes); diff != "" || !res.ManifestChanged || !res.DropInPending || len(res.ManifestContent) == 0 {
		t.Errorf("changes (-want,+got):\n%s\nresult %+v", diff, res)
	}
	// Installed for real, the same dry run would change nothing.
	if _, err := in.Install(context.Background(), InstallOptions{Images: archive}); err != nil {
		t.Fatal(err)
	}
	if res, err = in.Install(context.Background(), InstallOptions{Images: archive, DryRun: true}); err != nil || len(res.Changes) != 0 || res.ManifestChanged {
		t.Errorf("a dry run after the same install: %v, changes %q", err, res.Changes)
	}
	// Invalid values are refused as without it.
	if _, err := in.Install(context.Background(), InstallOptions{DryRun: true, Values: map[string]any{"load-watcher": map[string]any{"provider": "datadog"}}}); err == nil {
		t.Error("a dry run accepted invalid values")
	}
}
