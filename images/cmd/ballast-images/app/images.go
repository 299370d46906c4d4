package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	specsv1 "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/ballast-sched/ballast/images/pkg/build"
)

// licenses is the SPDX expression of Ballast's license.
const licenses = "Apache-2.0"

// Output file names, in --out.
const (
	archivePrefix = "ballast-images-"
	archiveSuffix = ".tar"
	sumsFile      = "SHA256SUMS"
	binDir        = "bin"
)

// archiveName names the air-gap archive of platform p the way k3s names
// its own: ballast-images-linux-amd64.tar, ballast-images-linux-arm.tar.
func archiveName(p v1.Platform) string {
	return archivePrefix + platforms[p.String()].slug + archiveSuffix
}

// image is one component's built images.
type image struct {
	component component
	tag       name.Tag
	index     v1.ImageIndex
	sizes     []int64 // compressed size, by platform
}

// progress writes progress lines to stderr, one goroutine at a time.
type progress struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *progress) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// buildImages cross-compiles, assembles and writes every image, pushes them with
// --push, and prints the size table.
func buildImages(ctx context.Context, streams Streams, cfg *config) error {
	p := &progress{w: streams.ErrOut}
	created, err := sourceDate(cfg.root)
	if err != nil {
		return err
	}
	rev, dirty := revision(cfg.root)
	if dirty {
		p.logf("warning: the work tree has uncommitted changes; the revision label names %s", rev)
	}
	if cfg.version != cfg.chart.appVersion {
		p.logf("note: %s is not the chart's appVersion %s; install with --set global.image.tag=%s", cfg.version, cfg.chart.appVersion, cfg.version)
	}
	caCerts, err := build.HostCACertificates()
	if err != nil {
		return err
	}

	binaries := map[string]string{} // by component binary and platform
	var jobs []binaryJob
	for _, c := range cfg.components {
		for _, pl := range cfg.platforms {
			out := filepath.Join(cfg.out, binDir, platforms[pl.String()].slug, c.binary())
			binaries[c.binary()+" "+pl.String()] = out
			jobs = append(jobs, binaryJob{component: c, platform: pl, out: out})
		}
	}
	p.logf("building %d binaries of version %s (revision %s), created %s", len(jobs), cfg.version, orNone(rev), created.Format("2006-01-02T15:04:05Z"))
	if err := goBuildAll(ctx, p, cfg.root, cfg.version, rev, cfg.keepPaths, jobs); err != nil {
		return err
	}

	var images []image
	for _, c := range cfg.components {
		tag, err := name.NewTag(cfg.registry+"/"+c.repository+":"+cfg.version, cfg.nameOptions()...)
		if err != nil {
			return err
		}
		spec := build.Spec{
			Name:           c.binary(),
			Created:        created,
			CACertificates: caCerts,
			Labels:         labels(cfg, c, rev),
		}
		for _, pl := range cfg.platforms {
			spec.Binaries = append(spec.Binaries, build.Binary{Platform: pl, Path: binaries[c.binary()+" "+pl.String()]})
		}
		idx, err := build.Index(spec)
		if err != nil {
			return err
		}
		img := image{component: c, tag: tag, index: idx}
		for _, pl := range cfg.platforms {
			platformImg, err := build.PlatformImage(idx, pl)
			if err != nil {
				return err
			}
			size, err := build.CompressedSize(platformImg)
			if err != nil {
				return err
			}
			img.sizes = append(img.sizes, size)
		}
		dir := filepath.Join(cfg.out, c.repository)
		if err := build.WriteLayout(dir, tag, idx); err != nil {
			return err
		}
		digest, err := idx.Digest()
		if err != nil {
			return err
		}
		p.logf("wrote %s@%s to %s", tag, digest, dir)
		images = append(images, img)
	}

	archives, err := writeArchives(cfg, images)
	if err != nil {
		return err
	}
	for _, a := range archives {
		p.logf("wrote %s", filepath.Join(cfg.out, a))
	}
	if err := writeSums(cfg.out, archives); err != nil {
		return err
	}
	if cfg.push {
		if err := push(ctx, p, cfg.version, images); err != nil {
			return err
		}
	}
	return printSizes(streams.Out, cfg.platforms, images)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// labels are the OCI labels of c's images; build adds created.
func labels(cfg *config, c component, rev string) map[string]string {
	l := map[string]string{
		specsv1.AnnotationTitle:       c.repository,
		specsv1.AnnotationDescription: c.description,
		specsv1.AnnotationVersion:     cfg.version,
		specsv1.AnnotationSource:      cfg.chart.source,
		specsv1.AnnotationLicenses:    licenses,
	}
	if rev != "" {
		l[specsv1.AnnotationRevision] = rev
	}
	return l
}

// writeArchives writes one air-gap archive per platform holding every
// component's image, and removes archives of platforms not built this time.
func writeArchives(cfg *config, images []image) ([]string, error) {
	var names []string
	for _, pl := range cfg.platforms {
		tagged := map[name.Tag]v1.Image{}
		for _, img := range images {
			platformImg, err := build.PlatformImage(img.index, pl)
			if err != nil {
				return nil, err
			}
			tagged[img.tag] = platformImg
		}
		file := archiveName(pl)
		if err := build.WriteArchive(filepath.Join(cfg.out, file), tagged); err != nil {
			return nil, fmt.Errorf("writing %s: %w", file, err)
		}
		names = append(names, file)
	}
	stale, err := filepath.Glob(filepath.Join(cfg.out, archivePrefix+"*"+archiveSuffix))
	if err != nil {
		return nil, err
	}
	for _, f := range stale {
		if !slices.Contains(names, filepath.Base(f)) {
			if err := os.Remove(f); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// writeSums writes SHA256SUMS of files in dir, in sha256sum's format.
func writeSums(dir string, files []string) error {
	var b strings.Builder
	for _, f := range files {
		sum, err := sha256File(filepath.Join(dir, f))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%x  %s\n", sum, f)
	}
	return os.WriteFile(filepath.Join(dir, sumsFile), []byte(b.String()), 0o644)
}

func sha256File(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

// push pushes every index under its tag and, for a release (no
// pre-release part), under X.Y too.
func push(ctx context.Context, p *progress, version string, images []image) error {
	opts := []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
	for _, img := range images {
		if err := remote.WriteIndex(img.tag, img.index, opts...); err != nil {
			return fmt.Errorf("pushing %s: %w", img.tag, err)
		}
		p.logf("pushed %s", img.tag)
		minor, ok := minorTag(version)
		if !ok {
			continue
		}
		t := img.tag.Context().Tag(minor)
		if err := remote.Tag(t, img.index, opts...); err != nil {
			return fmt.Errorf("tagging %s: %w", t, err)
		}
		p.logf("pushed %s", t)
	}
	return nil
}

// minorTag returns X.Y of a release version X.Y.Z; a pre-release gets none.
func minorTag(version string) (string, bool) {
	if strings.Contains(version, "-") {
		return "", false
	}
	i := strings.LastIndex(version, ".")
	return version[:i], i > 0
}

// printSizes prints the compressed size of every image as a Markdown table.
func printSizes(w io.Writer, pls []v1.Platform, images []image) error {
	var b strings.Builder
	b.WriteString("| Image |")
	for _, pl := range pls {
		fmt.Fprintf(&b, " %s |", pl)
	}
	b.WriteString("\n|---|" + strings.Repeat("--:|", len(pls)) + "\n")
	for _, img := range images {
		fmt.Fprintf(&b, "| %s |", img.component.repository)
		for _, size := range img.sizes {
			fmt.Fprintf(&b, " %.1f MiB |", float64(size)/(1<<20))
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
