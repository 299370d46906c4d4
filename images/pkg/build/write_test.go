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
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func TestArchiveRoundTrips(t *testing.T) {
	spec := testSpec(t)
	hello, err := Image(spec, spec.Binaries[0])
	if err != nil {
		t.Fatal(err)
	}
	spec.Name = "greeter"
	greeter, err := Image(spec, spec.Binaries[0])
	if err != nil {
		t.Fatal(err)
	}
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
		cf, err := got.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
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
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("index.json lists %d manifests, want the one index", len(m.Manifests))
	}
	wantAnnotations := map[string]string{
		"org.opencontainers.image.ref.name": "1.2.3",
		"io.containerd.image.name":          "ghcr.io/example/hello:1.2.3",
	}
	if diff := cmp.Diff(wantAnnotations, m.Manifests[0].Annotations); diff != "" {
		t.Errorf("index.json annotations (-want,+got):\n%s", diff)
	}
	want, _ := idx.Digest()
	if m.Manifests[0].Digest != want {
		t.Errorf("index.json points at %s, want the index %s", m.Manifests[0].Digest, want)
	}
	// Every blob is there: each platform's image reads back whole.
	written, err := top.ImageIndex(want)
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
