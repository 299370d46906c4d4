package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"
)

// containerdImageName is the annotation containerd reads for an image's
// full name when it imports an OCI layout.
const containerdImageName = "io.containerd.image.name"

// ParsePlatform parses os/architecture[/variant], e.g. linux/arm/v7.
func ParsePlatform(s string) (v1.Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" || (len(parts) == 3 && parts[2] == "") {
		return v1.Platform{}, fmt.Errorf("platform %q: want os/architecture[/variant], e.g. linux/arm/v7", s)
	}
	p := v1.Platform{OS: parts[0], Architecture: parts[1]}
	if len(parts) == 3 {
		p.Variant = parts[2]
	}
	return p, nil
}

// MustParsePlatform is ParsePlatform for constants; it panics on error.
func MustParsePlatform(s string) v1.Platform {
	p, err := ParsePlatform(s)
	if err != nil {
		panic(err)
	}
	return p
}

// PlatformImage returns the image of platform p in idx.
func PlatformImage(idx v1.ImageIndex, p v1.Platform) (v1.Image, error) {
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, desc := range m.Manifests {
		if desc.Platform != nil && desc.Platform.Equals(p) {
			return idx.Image(desc.Digest)
		}
	}
	return nil, fmt.Errorf("no image for platform %s", p)
}

// WriteLayout writes idx as an OCI image layout in dir, named tag: its
// index.json lists idx, annotated with the tag (org.opencontainers.image.ref.name)
// and the full name containerd gives it on import (io.containerd.image.name).
// A layout already in dir is replaced; any other content is an error.
func WriteLayout(dir string, tag name.Tag, idx v1.ImageIndex) error {
	if err := clearLayout(dir); err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		specsv1.AnnotationRefName: tag.TagStr(),
		containerdImageName:       tag.Name(),
	}))
}

// ReadLayout returns the image index that the OCI layout in dir names, as
// WriteLayout writes it.
func ReadLayout(dir string) (v1.ImageIndex, error) {
	lp, err := layout.FromPath(dir)
	if err != nil {
		return nil, err
	}
	top, err := lp.ImageIndex()
	if err != nil {
		return nil, err
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, err
	}
	if len(m.Manifests) != 1 {
		return nil, fmt.Errorf("%s: index.json lists %d manifests, want one image index", dir, len(m.Manifests))
	}
	return top.ImageIndex(m.Manifests[0].Digest)
}

// clearLayout removes the OCI layout in dir, so that a new one does not
// add to the old; it refuses to remove a directory that is something else.
func clearLayout(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && len(entries) == 0) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, "oci-layout")); err != nil {
		return fmt.Errorf("%s exists and is not an OCI image layout; not replacing it", dir)
	}
	return os.RemoveAll(dir)
}

// WriteArchive writes images, each under its tag, to path as a Docker
// archive (docker save's format), the one `ctr images import` and k3s's
// agent/images directory read. The images must be of the platform of the
// nodes that import them.
func WriteArchive(path string, images map[name.Tag]v1.Image) error {
	if len(images) == 0 {
		return errors.New("no images to write")
	}
	refs := make(map[name.Reference]v1.Image, len(images))
	for tag, img := range images {
		refs[tag] = img
	}
	return tarball.MultiRefWriteToFile(path, refs)
}

// CompressedSize returns what pulling img transfers: its compressed
// layers, config and manifest.
func CompressedSize(img v1.Image) (int64, error) {
	m, err := img.Manifest()
	if err != nil {
		return 0, err
	}
	raw, err := img.RawManifest()
	if err != nil {
		return 0, err
	}
	size := m.Config.Size + int64(len(raw))
	for _, l := range m.Layers {
		size += l.Size
	}
	return size, nil
}
