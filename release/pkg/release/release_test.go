package release

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

// TestRelease checks the release `make release` built, named by
// BALLAST_RELEASE_DIR: the chart's images are the images built in the same
// run, and every asset belongs to the others (Verify).
func TestRelease(t *testing.T) {
	dir := os.Getenv("BALLAST_RELEASE_DIR")
	if dir == "" {
		t.Skip("no release to check: make release sets BALLAST_RELEASE_DIR")
	}
	if err := Verify(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	// The chart archive is the chart the binaries embed.
	chrt, err := ReadChart("../../..")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, ChartAsset(chrt.Version)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := charts.Archive()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not the chart the binaries embed", ChartAsset(chrt.Version))
	}
}

// chartImages renders the chart of this tree as a release packs it.
func chartImages(t *testing.T) (Chart, []string) {
	t.Helper()
	chrt, err := ReadChart("../../..")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), ChartAsset(chrt.Version))
	if err := writeChart("../../..", path); err != nil {
		t.Fatal(err)
	}
	images, err := ChartImages(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return chrt, images
}

func TestChartImagesAreTheChartsDefaults(t *testing.T) {
	chrt, images := chartImages(t)
	if len(images) != len(Images) {
		t.Fatalf("the chart pulls %v, want one image each of %v", images, Images)
	}
	for i, img := range Images {
		if want := chrt.Registry + "/" + img + ":" + chrt.Version; images[i] != want && !strings.Contains(strings.Join(images, " "), want) {
			t.Errorf("the chart pulls %v, want %s among them", images, want)
		}
	}
}

// TestCheckArchive: an archive holding the chart's images passes; one whose
// registry, tag or platform differs from the chart's fails.
func TestCheckArchive(t *testing.T) {
	chrt, want := chartImages(t)
	amd64 := Platform{OS: "linux", Arch: "amd64"}
	for _, tc := range []struct {
		name, registry, tag, arch string
		wantErr                   bool
	}{
		{name: "the chart's images", registry: chrt.Registry, tag: chrt.Version, arch: "amd64"},
		{name: "another tag", registry: chrt.Registry, tag: chrt.Version + "-dirty", arch: "amd64", wantErr: true},
		{name: "another registry", registry: "ghcr.io/someone-else", tag: chrt.Version, arch: "amd64", wantErr: true},
		{name: "another platform", registry: chrt.Registry, tag: chrt.Version, arch: "arm64", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var tags []string
			for _, img := range Images {
				tags = append(tags, tc.registry+"/"+img+":"+tc.tag)
			}
			k3stest.ImagesArchive(t, dir, ArchiveAsset(amd64), tc.arch, tags...)
			err := checkArchive(dir, amd64, want)
			if (err != nil) != tc.wantErr {
				t.Errorf("checkArchive = %v, want error %t", err, tc.wantErr)
			}
		})
	}
}

func TestCheckSums(t *testing.T) {
	dir := t.TempDir()
	for _, a := range Assets("1.2.3") {
		if err := os.WriteFile(filepath.Join(dir, a), []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeSums(dir); err != nil {
		t.Fatal(err)
	}
	if err := checkSums(dir, "1.2.3"); err != nil {
		t.Fatalf("sums of a complete release: %v", err)
	}
	// A changed asset and a missing one are both found.
	if err := os.WriteFile(filepath.Join(dir, ChartAsset("1.2.3")), []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, ArchiveAsset(ImagePlatforms[0]))); err != nil {
		t.Fatal(err)
	}
	err := checkSums(dir, "1.2.3")
	if err == nil || !strings.Contains(err.Error(), ChartAsset("1.2.3")) || !strings.Contains(err.Error(), ArchiveAsset(ImagePlatforms[0])) {
		t.Errorf("checkSums = %v, want the changed chart and the missing archive", err)
	}
}

func TestSBOM(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "test.spdx.json")
	subject := sbomSubject{name: "release.test", version: "1.2.3", purpose: "APPLICATION", file: self, binary: self}
	if err := writeSBOM(path, subject, time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	if err := checkSBOM(path, self); err != nil {
		t.Errorf("checkSBOM of the SBOM just written: %v", err)
	}
	raw, _ := os.ReadFile(path)
	for _, want := range []string{`"spdxVersion": "SPDX-2.3"`, `"name": "stdlib"`, `"relationshipType": "DESCRIBES"`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the SBOM does not hold %s", want)
		}
	}
	other := filepath.Join(t.TempDir(), "other")
	if err := os.WriteFile(other, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := checkSBOM(path, other); err == nil {
		t.Error("checkSBOM took an SBOM for another file")
	}
}

func TestCheckBinaryRefusesADevelopmentBuild(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := checkBinary(self, Platform{OS: "linux", Arch: "amd64"}, "1.2.3", "0123456789abcdef0123456789abcdef01234567"); err == nil {
		t.Error("checkBinary took a test binary, built without a version and with local paths, for a release binary")
	}
}
