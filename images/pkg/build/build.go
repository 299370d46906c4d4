// Package build makes OCI images of static Linux programs without a
// container engine: no Dockerfile, no base image, no emulation for foreign
// architectures.
//
// An image is FROM scratch with one layer holding the program at
// /usr/local/bin/<name> and what a static Go program expects of its root
// filesystem: /etc/passwd and /etc/group naming the unprivileged user
// nonroot (uid and gid 65532), the CA bundle at
// /etc/ssl/certs/ca-certificates.crt and an empty /tmp (mode 1777). There is
// no shell. Every timestamp is Spec.Created, so the same binaries and Spec
// give the same digests.
//
// Typical use, for any static binary:
//
//	spec := build.Spec{Name: "pause", Binaries: []build.Binary{
//		{Platform: build.MustParsePlatform("linux/amd64"), Path: "_output/amd64/pause"},
//		{Platform: build.MustParsePlatform("linux/arm64"), Path: "_output/arm64/pause"},
//	}, Created: created, CACertificates: certs}
//	idx, err := build.Index(spec)                      // one image per binary
//	err = build.WriteLayout("_output/pause", tag, idx) // OCI image layout
//	img, err := build.PlatformImage(idx, build.MustParsePlatform("linux/amd64"))
//	err = build.WriteArchive("_output/images-amd64.tar", map[name.Tag]v1.Image{tag: img})
package build

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// Defaults of Spec.
const (
	// DefaultUser is nonroot, as uid:gid so that Kubernetes can check
	// runAsNonRoot without reading /etc/passwd.
	DefaultUser = "65532:65532"
	// BinDir is where the program is installed.
	BinDir = "/usr/local/bin"
	// CACertificatesPath is where the image holds the CA bundle, the first
	// place Go's crypto/x509 looks on Linux. Debian's package
	// ca-certificates puts the build host's bundle there too.
	CACertificatesPath = "/etc/ssl/certs/ca-certificates.crt"
)

// createdBy is the history entry of the single layer.
const createdBy = "ballast images: static binary, passwd, group, CA certificates, /tmp"

// Binary is one platform's build of the program.
type Binary struct {
	// Platform the binary runs on, e.g. linux/arm/v7.
	Platform v1.Platform
	// Path of the statically linked ELF file.
	Path string
}

// Spec describes the images of one program.
type Spec struct {
	// Name of the program: it is installed as /usr/local/bin/<Name>, which
	// is the entrypoint, and is the default title label.
	Name string
	// Binaries holds one binary per platform; the index lists them in
	// this order.
	Binaries []Binary
	// Args are the default arguments (the image's Cmd); none when empty.
	Args []string
	// Env is added to PATH=/usr/local/bin.
	Env []string
	// User the program runs as; DefaultUser when empty.
	User string
	// Labels of every image. org.opencontainers.image.created is set from
	// Created and org.opencontainers.image.title defaults to Name.
	Labels map[string]string
	// Created is every timestamp of the image: config, history and file
	// times. Take it from SOURCE_DATE_EPOCH or the commit for reproducible
	// images. Required.
	Created time.Time
	// CACertificates is the content of /etc/ssl/certs/ca-certificates.crt
	// (see HostCACertificates). Required.
	CACertificates []byte
}

// HostCACertificates reads the build host's CA bundle, Debian's package
// ca-certificates.
func HostCACertificates() ([]byte, error) {
	b, err := os.ReadFile(CACertificatesPath)
	if err != nil {
		return nil, fmt.Errorf("reading the CA bundle (install the ca-certificates package): %w", err)
	}
	return b, nil
}

// Index returns the image of every binary of spec and the OCI image index
// over them, each listed with its platform.
func Index(spec Spec) (v1.ImageIndex, error) {
	if len(spec.Binaries) == 0 {
		return nil, errors.New("no binaries")
	}
	seen := map[string]bool{}
	for _, bin := range spec.Binaries {
		if seen[bin.Platform.String()] {
			return nil, fmt.Errorf("two binaries for %s", bin.Platform)
		}
		seen[bin.Platform.String()] = true
	}
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, bin := range spec.Binaries {
		img, err := Image(spec, bin)
		if err != nil {
			return nil, err
		}
		p := bin.Platform
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &p}})
	}
	return idx, nil
}

// Image returns the image of one binary of spec.
func Image(spec Spec, bin Binary) (v1.Image, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	program, err := os.ReadFile(bin.Path)
	if err != nil {
		return nil, err
	}
	if err := checkStatic(bin.Path, program, bin.Platform); err != nil {
		return nil, err
	}
	created := spec.Created.UTC().Truncate(time.Second)
	layer, err := newLayer(rootFS(spec.Name, program, spec.CACertificates), created)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", bin.Path, err)
	}
	diffID, err := layer.DiffID()
	if err != nil {
		return nil, err
	}

	user := spec.User
	if user == "" {
		user = DefaultUser
	}
	labels := map[string]string{specsv1.AnnotationTitle: spec.Name}
	maps.Copy(labels, spec.Labels)
	labels[specsv1.AnnotationCreated] = created.Format(time.RFC3339)

	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	if img, err = mutate.AppendLayers(img, layer); err != nil {
		return nil, err
	}
	return mutate.ConfigFile(img, &v1.ConfigFile{
		Architecture: bin.Platform.Architecture,
		OS:           bin.Platform.OS,
		Variant:      bin.Platform.Variant,
		Created:      v1.Time{Time: created},
		Config: v1.Config{
			User:       user,
			Entrypoint: []string{path.Join(BinDir, spec.Name)},
			Cmd:        spec.Args,
			Env:        append([]string{"PATH=" + BinDir}, spec.Env...),
			Labels:     labels,
		},
		RootFS:  v1.RootFS{Type: "layers", DiffIDs: []v1.Hash{diffID}},
		History: []v1.History{{Created: v1.Time{Time: created}, CreatedBy: createdBy}},
	})
}

func (s Spec) validate() error {
	var errs []error
	if s.Name == "" || path.Base(s.Name) != s.Name || s.Name == "." || s.Name == ".." {
		errs = append(errs, fmt.Errorf("name %q: want a file name", s.Name))
	}
	if s.Created.IsZero() {
		errs = append(errs, errors.New("created: required"))
	}
	if len(s.CACertificates) == 0 {
		errs = append(errs, errors.New("CA certificates: required"))
	}
	return errors.Join(errs...)
}

// newLayer makes the layer of files, compressed once at the best gzip
// level: Go's gzip writes no time or name, so the bytes depend on the
// content alone.
func newLayer(files []file, mtime time.Time) (v1.Layer, error) {
	var raw bytes.Buffer
	if err := writeTar(&raw, files, mtime); err != nil {
		return nil, err
	}
	var gz bytes.Buffer
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw.Bytes()); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	blob := gz.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(blob)), nil
	}, tarball.WithMediaType(types.OCILayer))
}
