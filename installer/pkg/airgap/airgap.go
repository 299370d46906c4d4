// Package airgap reads the images archives Ballast ships for clusters that
// pull from no registry (`make images`, a release's
// ballast-images-linux-<arch>.tar): which images one holds and for which
// platform, the one a node of some architecture needs, and the image
// settings of the chart that make it use them.
package airgap

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// ArchiveName is the images archive for nodes of a Kubernetes architecture
// (a Node's status.nodeInfo.architecture: amd64, arm64, arm), named as k3s
// names its own air-gap archives.
func ArchiveName(arch string) string { return "ballast-images-linux-" + arch + ".tar" }

// Archive is one images archive.
type Archive struct {
	Path string
	// Arch is its images' architecture, as a Node reports its own.
	Arch string
	// Tags are the images it holds.
	Tags []name.Tag
}

// Find returns the archive for nodes of arch: path itself when it is a
// file, else ArchiveName(arch) in the directory path.
func Find(path, arch string) (string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("images archive: %w", err)
	}
	if !info.IsDir() {
		return path, nil
	}
	file := filepath.Join(path, ArchiveName(arch))
	if _, err := os.Stat(file); err != nil {
		return "", fmt.Errorf("%s holds no images archive for %s nodes (%s): build it with `make images PLATFORMS=linux/%s`",
			path, arch, ArchiveName(arch), Platform(arch))
	}
	return file, nil
}

// Platform is the image platform (as make images takes it) of a Kubernetes architecture.
func Platform(arch string) string {
	if arch == "arm" {
		return "arm/v7"
	}
	return arch
}

// Read reads an archive's images and their platform; every image must be
// for Linux on one architecture.
func Read(path string) (Archive, error) {
	opener := func() (io.ReadCloser, error) { return os.Open(path) }
	m, err := tarball.LoadManifest(opener)
	if err != nil {
		return Archive{}, fmt.Errorf("read images archive %s: %w", path, err)
	}
	a := Archive{Path: path}
	for _, d := range m {
		for _, t := range d.RepoTags {
			tag, err := name.NewTag(t, name.StrictValidation)
			if err != nil {
				return Archive{}, fmt.Errorf("images archive %s: tag %q: %w", path, t, err)
			}
			img, err := tarball.Image(opener, &tag)
			if err != nil {
				return Archive{}, fmt.Errorf("images archive %s: image %s: %w", path, t, err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				return Archive{}, fmt.Errorf("images archive %s: image %s: %w", path, t, err)
			}
			if cf.OS != "linux" || (a.Arch != "" && cf.Architecture != a.Arch) {
				return Archive{}, fmt.Errorf("images archive %s mixes platforms: %s is %s/%s", path, t, cf.OS, cf.Architecture)
			}
			a.Arch = cf.Architecture
			a.Tags = append(a.Tags, tag)
		}
	}
	if len(a.Tags) == 0 {
		return Archive{}, fmt.Errorf("images archive %s holds no tagged image", path)
	}
	return a, nil
}

// ChartImages returns the registry and tag that make the chart pull the
// archive's images: repositories names each component's image below the
// registry (the chart's <component>.image.repository). Every one must be in
// the archive under the same registry and tag.
func (a Archive) ChartImages(repositories map[string]string) (registry, tag string, err error) {
	comps := make([]string, 0, len(repositories))
	for c := range repositories {
		comps = append(comps, c)
	}
	slices.Sort(comps)
	var missing []string
	for _, c := range comps {
		repo := repositories[c]
		i := slices.IndexFunc(a.Tags, func(t name.Tag) bool {
			full := t.Context().Name()
			return full == repo || strings.HasSuffix(full, "/"+repo)
		})
		if i < 0 {
			missing = append(missing, c+" ("+repo+")")
			continue
		}
		t := a.Tags[i]
		reg := strings.TrimSuffix(strings.TrimSuffix(t.Context().Name(), repo), "/")
		switch {
		case registry == "" && tag == "":
			registry, tag = reg, t.TagStr()
		case reg != registry || t.TagStr() != tag:
			return "", "", fmt.Errorf("images archive %s: %s is %s, not under %s with tag %s like the others", a.Path, c, t, registry, tag)
		}
	}
	if len(missing) > 0 {
		return "", "", fmt.Errorf("images archive %s lacks the image of %s (it holds %s)", a.Path, strings.Join(missing, ", "), a.tagList())
	}
	if registry == "" {
		return "", "", errors.New("no component to find an image of")
	}
	return registry, tag, nil
}

func (a Archive) tagList() string {
	s := make([]string, len(a.Tags))
	for i, t := range a.Tags {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}
