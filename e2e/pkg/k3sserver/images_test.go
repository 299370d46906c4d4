package k3sserver

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
)

func TestImporter(t *testing.T) {
	dir := t.TempDir()
	var imported []string
	im := Importer{Dir: dir, Import: func(_ context.Context, path string) error {
		imported = append(imported, filepath.Base(path))
		return nil
	}}
	_, ctx := ktesting.NewTestContext(t)
	write := func(name, content string, mtime time.Time) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	step := func(all bool, want ...string) {
		t.Helper()
		imported = nil
		if err := im.Sync(ctx, all); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, imported); diff != "" {
			t.Errorf("imported (-want,+got):\n%s", diff)
		}
	}
	t0 := time.Now().Add(-time.Hour)
	write("k3s-airgap-images.tar", "a", t0)
	write("ballast-images-linux-amd64.tar.zst", "b", t0)
	write(".ballast-images.tar.123.tmp", "partial", t0)
	write("notes.txt", "pull list", t0)
	// At start, every archive.
	step(true, "ballast-images-linux-amd64.tar.zst", "k3s-airgap-images.tar")
	step(false)
	// A new archive is imported once it holds still for a look.
	write("extra.tar", "c", t0)
	step(false)
	step(false, "extra.tar")
	// A changed one again.
	write("k3s-airgap-images.tar", "a2", t0.Add(time.Minute))
	step(false)
	step(false, "k3s-airgap-images.tar")
	step(false)
}
