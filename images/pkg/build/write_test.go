package build

import (
	"archive/tar"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestArchiveRoundTrips(t *testing.T) {
	spec := testSpec(t)
	hello := mustImage(t, spec, 0)
	spec.Name = "greeter"
	greeter := mustImage(t, spec, 0)
	images := map[name.Tag]v1.Image{
		name.MustParseReference("ghcr.io/example/hello:1.2.3").(name.Tag):   hello,
		name.MustParseReference("ghcr.io/example/greeter:1.2.3").(name.Tag): greeter,
	}
	archive := filepath.Join(t.TempDir(), "images-linux-amd64.tar")
	if err := WriteArchive(archive, images); err != nil {
		t.Fatal(err)
	}

	for tag, want := range images {
		got, err := tarball.ImageFromPath(archive, &tag)
		if err != nil {
			t.Fatalf("reading %s back: %v", tag, err)
		}
		// The archive keeps config and layers but not the manifest, which the
		// importer writes anew: compare what it keeps.
		if diff := cmp.Diff(blobDigests(t, want), blobDigests(t, got)); diff != "" {
			t.Errorf("%s: config and layer digests after the round trip (-want,+got):\n%s", tag, diff)
		}
		cf := configOf(t, got)
		if want := "/usr/local/bin/" + strings.TrimPrefix(tag.RepositoryStr(), "example/"); cf.Config.Entrypoint[0] != want {
			t.Errorf("%s: entrypoint %v, want %s", tag, cf.Config.Entrypoint, want)
		}
	}

	// What ctr and k3s read: manifest.json names every image by its full tag.
	var repoTags []string
	for _, d := range readManifestJSON(t, archive) {
		repoTags = append(repoTags, d.RepoTags...)
	}
	if diff := cmp.Diff([]string{"ghcr.io/example/greeter:1.2.3", "ghcr.io/example/hello:1.2.3"}, repoTags); diff != "" {
		t.Errorf("manifest.json RepoTags (-want,+got):\n%s", diff)
	}
}

// blobDigests returns the digests of img's config and layers.
func blobDigests(t *testing.T, img v1.Image) []v1.Hash {
	t.Helper()
	cfg, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	digests := []v1.Hash{cfg}
	for _, l := range layers {
		d, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, d)
	}
	return digests
}

func readManifestJSON(t *testing.T, archive string) tarball.Manifest {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err != nil {
			t.Fatalf("no manifest.json in %s: %v", archive, err)
		}
		if hdr.Name == "manifest.json" {
			var m tarball.Manifest
			b, err := io.ReadAll(tr)
			if err == nil {
				err = json.Unmarshal(b, &m)
			}
			if err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
}

func TestWriteArchiveNeedsImages(t *testing.T) {
	if err := WriteArchive(filepath.Join(t.TempDir(), "x.tar"), nil); err == nil {
		t.Error("WriteArchive(no images) = nil, want an error")
	}
}

func TestWriteLayout(t *testing.T) {
	idx, err := Index(testSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	tag := name.MustParseReference("ghcr.io/example/hello:1.2.3").(name.Tag)
	dir := filepath.Join(t.TempDir(), "hello")
	// Twice: the second write replaces the first instead of adding to it.
	for range 2 {
		if err := WriteLayout(dir, tag, idx); err != nil {
			t.Fatal(err)
		}
	}
	// index.json names the index by tag, for OCI tools and for containerd.
	raw, err := os.ReadFile(filepath.Join(dir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var top v1.IndexManifest
	if err := json.Unmarshal(raw, &top); err != nil {
		t.Fatal(err)
	}
	want, _ := idx.Digest()
	if len(top.Manifests) != 1 || top.Manifests[0].Digest != want {
		t.Fatalf("index.json lists %+v, want the one index %s", top.Manifests, want)
	}
	wantAnnotations := map[string]string{
		"org.opencontainers.image.ref.name": "1.2.3",
		"io.containerd.image.name":          "ghcr.io/example/hello:1.2.3",
	}
	if diff := cmp.Diff(wantAnnotations, top.Manifests[0].Annotations); diff != "" {
		t.Errorf("index.json annotations (-want,+got):\n%s", diff)
	}
	// Every blob is there: each platform's image reads back whole.
	written, err := ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []v1.Platform{amd64, armv7} {
		img, err := PlatformImage(written, p)
		if err != nil {
			t.Fatal(err)
		}
		layers, err := img.Layers()
		if err != nil {
			t.Fatal(err)
		}
		rc, err := layers[0].Compressed()
		if err != nil {
			t.Fatalf("%s: layer blob: %v", p, err)
		}
		rc.Close()
	}
}

func TestWriteLayoutKeepsOtherDirectories(t *testing.T) {
	idx, err := Index(testSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	tag := name.MustParseReference("example/hello:1").(name.Tag)
	if err := WriteLayout(dir, tag, idx); err == nil || !strings.Contains(err.Error(), "not an OCI image layout") {
		t.Errorf("WriteLayout over another directory = %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
		t.Errorf("the directory's file is gone: %v", err)
	}
}
