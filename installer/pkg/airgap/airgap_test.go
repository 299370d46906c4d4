package airgap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

var repositories = map[string]string{"load-watcher": "load-watcher", "scheduler": "ballast-scheduler", "descheduler": "ballast-descheduler"}

func archive(t *testing.T, dir, file, arch string, tags ...string) string {
	return k3stest.ImagesArchive(t, dir, file, arch, tags...)
}

func TestFindAndRead(t *testing.T) {
	dir := t.TempDir()
	archive(t, dir, ArchiveName("arm64"), "arm64",
		"ghcr.io/me/load-watcher:0.2.0-rc.1", "ghcr.io/me/ballast-scheduler:0.2.0-rc.1", "ghcr.io/me/ballast-descheduler:0.2.0-rc.1")
	path, err := Find(dir, "arm64")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if a.Arch != "arm64" || len(a.Tags) != 3 {
		t.Errorf("archive: arch %q, %d tags; want arm64, 3", a.Arch, len(a.Tags))
	}
	registry, tag, err := a.ChartImages(repositories)
	if err != nil {
		t.Fatal(err)
	}
	if registry != "ghcr.io/me" || tag != "0.2.0-rc.1" {
		t.Errorf("ChartImages = %q, %q; want ghcr.io/me, 0.2.0-rc.1", registry, tag)
	}
	if _, err := Find(dir, "amd64"); err == nil || !strings.Contains(err.Error(), "make images PLATFORMS=linux/amd64") {
		t.Errorf("Find for a missing architecture: %v; want how to build it", err)
	}
	if got, err := Find(path, "amd64"); err != nil || got != path {
		t.Errorf("Find(file) = %q, %v; want the file itself", got, err)
	}
}

func TestChartImagesRefusesIncompleteOrMixedArchives(t *testing.T) {
	dir := t.TempDir()
	for name, tags := range map[string][]string{
		"missing.tar": {"ghcr.io/me/load-watcher:1.0.0", "ghcr.io/me/ballast-scheduler:1.0.0"},
		"mixed.tar":   {"ghcr.io/me/load-watcher:1.0.0", "ghcr.io/me/ballast-scheduler:1.0.0", "ghcr.io/you/ballast-descheduler:1.0.0"},
	} {
		a, err := Read(archive(t, dir, name, "amd64", tags...))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := a.ChartImages(repositories); err == nil {
			t.Errorf("%s: ChartImages accepted %v", name, tags)
		}
	}
}

func TestReadRefusesOtherFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notes.tar")
	if err := os.WriteFile(path, []byte("not an archive"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err == nil {
		t.Error("Read accepted a file that is no images archive")
	}
}
