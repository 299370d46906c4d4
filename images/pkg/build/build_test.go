package build

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var (
	amd64 = MustParsePlatform("linux/amd64")
	armv7 = MustParsePlatform("linux/arm/v7")
)

// created is the creation time of the test images: 2024-06-01T12:00:00Z.
var created = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)

// hello is a tiny Go program, built static for each platform once.
const hello = `package main

func main() { println("hello") }
`

var (
	binariesOnce sync.Once
	binariesDir  string
	binaries     map[string]string // by platform
	binariesErr  error
)

// helloBinary returns the path of hello built for p.
func helloBinary(t *testing.T, p v1.Platform) string {
	t.Helper()
	binariesOnce.Do(func() {
		dir, err := os.MkdirTemp("", "build-test-")
		if err != nil {
			binariesErr = err
			return
		}
		binariesDir = dir
		binaries = map[string]string{}
		src := filepath.Join(dir, "src")
		if binariesErr = os.MkdirAll(src, 0o755); binariesErr != nil {
			return
		}
		_ = os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.26\n"), 0o644)
		_ = os.WriteFile(filepath.Join(src, "main.go"), []byte(hello), 0o644)
		for _, p := range []v1.Platform{amd64, armv7} {
			out := filepath.Join(dir, strings.ReplaceAll(p.String(), "/", "-"))
			cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", out, ".")
			cmd.Dir = src
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOOS="+p.OS, "GOARCH="+p.Architecture, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
			if b, err := cmd.CombinedOutput(); err != nil {
				binariesErr = fmt.Errorf("%s: %w\n%s", p, err, b)
				return
			}
			binaries[p.String()] = out
		}
	})
	if binariesErr != nil {
		t.Fatalf("building hello: %v", binariesErr)
	}
	return binaries[p.String()]
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binariesDir != "" {
		_ = os.RemoveAll(binariesDir)
	}
	os.Exit(code)
}

var caBundle = []byte("-----BEGIN CERTIFICATE-----\ntest\n-----END CERTIFICATE-----\n")

func testSpec(t *testing.T) Spec {
	t.Helper()
	return Spec{
		Name: "hello",
		Binaries: []Binary{
			{Platform: amd64, Path: helloBinary(t, amd64)},
			{Platform: armv7, Path: helloBinary(t, armv7)},
		},
		Args:           []string{"--greeting=hi"},
		Labels:         map[string]string{"org.opencontainers.image.version": "1.2.3"},
		Created:        created,
		CACertificates: caBundle,
	}
}

// mustImage builds the image of spec's binary i.
func mustImage(t *testing.T, spec Spec, i int) v1.Image {
	t.Helper()
	img, err := Image(spec, spec.Binaries[i])
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func configOf(t *testing.T, img v1.Image) *v1.ConfigFile {
	t.Helper()
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	return cf
}

func TestImageConfig(t *testing.T) {
	img := mustImage(t, testSpec(t), 1)
	cf := configOf(t, img)
	want := v1.Config{
		User:       "65532:65532",
		Entrypoint: []string{"/usr/local/bin/hello"},
		Cmd:        []string{"--greeting=hi"},
		Env:        []string{"PATH=/usr/local/bin"},
		Labels: map[string]string{
			"org.opencontainers.image.title":   "hello", // from Name
			"org.opencontainers.image.version": "1.2.3",
			"org.opencontainers.image.created": "2024-06-01T12:00:00Z",
		},
	}
	if diff := cmp.Diff(want, cf.Config); diff != "" {
		t.Errorf("config (-want,+got):\n%s", diff)
	}
	// linux/arm/v7: the variant is its own field, not part of the architecture.
	if cf.OS != "linux" || cf.Architecture != "arm" || cf.Variant != "v7" {
		t.Errorf("platform = %s/%s/%s, want linux/arm/v7", cf.OS, cf.Architecture, cf.Variant)
	}
	if !cf.Created.Equal(created) || len(cf.History) != 1 || !cf.History[0].Created.Equal(created) {
		t.Errorf("created = %v, history = %+v; want every time %v", cf.Created, cf.History, created)
	}
	m, err := img.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIManifestSchema1 || m.Config.MediaType != types.OCIConfigJSON ||
		len(m.Layers) != 1 || m.Layers[0].MediaType != types.OCILayer {
		t.Errorf("media types: manifest %s, config %s, layers %+v; want one OCI gzip layer", m.MediaType, m.Config.MediaType, m.Layers)
	}
}

func TestImageUserAndTitleOverride(t *testing.T) {
	spec := testSpec(t)
	spec.User = "1000:1000"
	spec.Labels = map[string]string{"org.opencontainers.image.title": "greeter"}
	cf := configOf(t, mustImage(t, spec, 0))
	if cf.Config.User != "1000:1000" || cf.Config.Labels["org.opencontainers.image.title"] != "greeter" {
		t.Errorf("user %q, title %q; want 1000:1000 and greeter", cf.Config.User, cf.Config.Labels["org.opencontainers.image.title"])
	}
}

type entry struct {
	Mode    int64
	Type    byte
	Uid     int
	Gid     int
	ModTime time.Time
}

func TestLayerHoldsExactlyTheExpectedFiles(t *testing.T) {
	spec := testSpec(t)
	layers, err := mustImage(t, spec, 0).Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers = %d, %v; want 1", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := map[string]entry{}
	contents := map[string][]byte{}
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got[hdr.Name] = entry{Mode: hdr.Mode, Type: hdr.Typeflag, Uid: hdr.Uid, Gid: hdr.Gid, ModTime: hdr.ModTime.UTC()}
		if contents[hdr.Name], err = io.ReadAll(tr); err != nil {
			t.Fatal(err)
		}
	}
	dir := func(mode int64) entry { return entry{Mode: mode, Type: tar.TypeDir, ModTime: created} }
	reg := func(mode int64) entry { return entry{Mode: mode, Type: tar.TypeReg, ModTime: created} }
	want := map[string]entry{
		"etc/":                              dir(0o755),
		"etc/group":                         reg(0o644),
		"etc/passwd":                        reg(0o644),
		"etc/ssl/":                          dir(0o755),
		"etc/ssl/certs/":                    dir(0o755),
		"etc/ssl/certs/ca-certificates.crt": reg(0o644),
		"tmp/":                              dir(0o1777), // sticky, writable by all
		"usr/":                              dir(0o755),
		"usr/local/":                        dir(0o755),
		"usr/local/bin/":                    dir(0o755),
		"usr/local/bin/hello":               reg(0o755),
	}
	// Exactly these: in particular no bin/sh.
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer entries (-want,+got):\n%s", diff)
	}
	program, err := os.ReadFile(spec.Binaries[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(contents["usr/local/bin/hello"], program) {
		t.Error("usr/local/bin/hello differs from the binary")
	}
	if !bytes.Equal(contents["etc/ssl/certs/ca-certificates.crt"], caBundle) {
		t.Error("the CA bundle differs from Spec.CACertificates")
	}
	if !strings.Contains(string(contents["etc/passwd"]), "nonroot:x:65532:65532:") ||
		!strings.Contains(string(contents["etc/group"]), "nonroot:x:65532:") {
		t.Errorf("passwd/group lack nonroot 65532:\n%s\n%s", contents["etc/passwd"], contents["etc/group"])
	}
}

func TestIndexListsEachPlatform(t *testing.T) {
	idx, err := Index(testSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("index media type = %s, want %s", m.MediaType, types.OCIImageIndex)
	}
	var platforms []string
	for _, d := range m.Manifests {
		platforms = append(platforms, d.Platform.String())
	}
	if diff := cmp.Diff([]string{"linux/amd64", "linux/arm/v7"}, platforms); diff != "" {
		t.Errorf("index platforms (-want,+got):\n%s", diff)
	}
	for _, p := range []v1.Platform{amd64, armv7} {
		img, err := PlatformImage(idx, p)
		if err != nil {
			t.Fatal(err)
		}
		if got := configOf(t, img).Platform(); got == nil || !got.Equals(p) {
			t.Errorf("PlatformImage(%s) has platform %v", p, got)
		}
	}
	if _, err := PlatformImage(idx, MustParsePlatform("linux/arm64")); err == nil {
		t.Error("PlatformImage(linux/arm64) found an image the index does not have")
	}
}

func TestSameInputsGiveSameDigests(t *testing.T) {
	digest := func(spec Spec) v1.Hash {
		t.Helper()
		idx, err := Index(spec)
		if err != nil {
			t.Fatal(err)
		}
		d, err := idx.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := digest(testSpec(t))
	// The binaries' own file times are not part of the image.
	later := time.Now().Add(time.Hour)
	for _, b := range testSpec(t).Binaries {
		if err := os.Chtimes(b.Path, later, later); err != nil {
			t.Fatal(err)
		}
	}
	if second := digest(testSpec(t)); second != first {
		t.Errorf("two builds of the same inputs: %s then %s", first, second)
	}
	spec := testSpec(t)
	spec.Created = created.Add(time.Second)
	if other := digest(spec); other == first {
		t.Error("another creation time gave the same digest: the time is not in the image")
	}
}

func TestCompressedSize(t *testing.T) {
	spec := testSpec(t)
	img := mustImage(t, spec, 0)
	got, err := CompressedSize(img)
	if err != nil {
		t.Fatal(err)
	}
	layers, _ := img.Layers()
	layerSize, _ := layers[0].Size()
	config, _ := img.RawConfigFile()
	manifest, _ := img.RawManifest()
	if want := layerSize + int64(len(config)) + int64(len(manifest)); got != want {
		t.Errorf("CompressedSize = %d, want layer %d + config %d + manifest %d = %d", got, layerSize, len(config), len(manifest), want)
	}
	// The layer is gzip: smaller than the binary it holds.
	info, _ := os.Stat(spec.Binaries[0].Path)
	if layerSize >= info.Size() {
		t.Errorf("layer %d bytes, binary %d: not compressed", layerSize, info.Size())
	}
}

func TestImageRejectsBadInput(t *testing.T) {
	amd64Bin := helloBinary(t, amd64)
	notELF := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(notELF, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*Spec, *Binary)
		want   string
	}{
		{name: "binary of another architecture", mutate: func(_ *Spec, b *Binary) { b.Platform = MustParsePlatform("linux/arm64") },
			want: "not for platform linux/arm64"},
		{name: "not linux", mutate: func(_ *Spec, b *Binary) { b.Platform = MustParsePlatform("windows/amd64") }, want: "only linux"},
		{name: "not an ELF file", mutate: func(_ *Spec, b *Binary) { b.Path = notELF }, want: "not an ELF"},
		{name: "missing binary", mutate: func(_ *Spec, b *Binary) { b.Path = notELF + ".missing" }, want: "no such file"},
		{name: "no CA bundle", mutate: func(s *Spec, _ *Binary) { s.CACertificates = nil }, want: "CA certificates"},
		{name: "no creation time", mutate: func(s *Spec, _ *Binary) { s.Created = time.Time{} }, want: "created"},
		{name: "name with a slash", mutate: func(s *Spec, _ *Binary) { s.Name = "bin/hello" }, want: "name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := testSpec(t)
			bin := Binary{Platform: amd64, Path: amd64Bin}
			tt.mutate(&spec, &bin)
			_, err := Image(spec, bin)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Image() = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// A dynamically linked program needs a loader and libc, which a scratch
// image does not have.
func TestImageRejectsDynamicBinary(t *testing.T) {
	dynamic, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) on this host")
	}
	spec := testSpec(t)
	_, err = Image(spec, Binary{Platform: amd64, Path: dynamic})
	if err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("Image(%s) = %v, want an error saying it is dynamically linked", dynamic, err)
	}
}

func TestIndexRejectsTwoBinariesOfOnePlatform(t *testing.T) {
	spec := testSpec(t)
	spec.Binaries = append(spec.Binaries, spec.Binaries[0])
	if _, err := Index(spec); err == nil || !strings.Contains(err.Error(), "two binaries for linux/amd64") {
		t.Errorf("Index() = %v, want an error naming linux/amd64", err)
	}
}

func TestParsePlatform(t *testing.T) {
	tests := []struct {
		in      string
		want    v1.Platform
		wantErr bool
	}{
		{in: "linux/amd64", want: v1.Platform{OS: "linux", Architecture: "amd64"}},
		{in: "linux/arm/v7", want: v1.Platform{OS: "linux", Architecture: "arm", Variant: "v7"}},
		{in: "linux", wantErr: true},
		{in: "linux/", wantErr: true},
		{in: "linux/arm/", wantErr: true},
		{in: "linux/arm/v7/extra", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParsePlatform(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParsePlatform(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			}
			if !tt.wantErr && !got.Equals(tt.want) {
				t.Errorf("ParsePlatform(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}
