package release

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"go.yaml.in/yaml/v3"
	"golang.org/x/sync/errgroup"
	"helm.sh/helm/v3/pkg/chart/loader"

	"github.com/ballast-sched/ballast/charts"
)

// Options say where to build a release.
type Options struct {
	// Root is the repository's root.
	Root string
	// Out receives the release; it must not exist or be empty.
	Out string
	// Version and Registry, when set, must be the chart's: the binaries embed
	// the chart, so hack/set-chart-version.sh sets them in the tree first.
	Version, Registry string
	// Log receives progress lines.
	Log io.Writer
}

// imageBinaries maps each image to its binary.
var imageBinaries = map[string]string{
	"load-watcher": "load-watcher", "ballast-scheduler": "ballast-scheduler", "ballast-descheduler": "ballast-descheduler",
}

// linkJobs is how many binaries are built at once: linking ballast-sim,
// which holds a Kubernetes control plane, takes about 2.5 GB.
const linkJobs = 2

// Build builds every asset into o.Out: the images and their archives and
// layouts (ballast-images), the binaries, the chart archive, the SBOMs and
// SHA256SUMS.
func Build(ctx context.Context, o Options) error {
	chart, err := ReadChart(o.Root)
	if err != nil {
		return err
	}
	if o.Version != "" && o.Version != chart.Version {
		return fmt.Errorf("version %s is not the chart's %s: the binaries embed the chart, so set it in the tree first: "+
			"hack/set-chart-version.sh %s %s", o.Version, chart.Version, o.Version, chart.Registry)
	}
	if o.Registry != "" && o.Registry != chart.Registry {
		return fmt.Errorf("registry %s is not the chart's %s: the binaries embed the chart, so set it in the tree first: "+
			"hack/set-chart-version.sh %s %s", o.Registry, chart.Registry, chart.Version, o.Registry)
	}
	if entries, err := os.ReadDir(o.Out); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s is not empty: a release is built into a new directory", o.Out)
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return err
	}
	created, rev, err := source(o.Root)
	if err != nil {
		return err
	}
	logf := func(format string, args ...any) { fmt.Fprintf(o.Log, format+"\n", args...) }
	logf("release %s (revision %s), images in %s", chart.Version, rev, chart.Registry)

	staging := filepath.Join(o.Out, ".images")
	var platforms []string
	for _, p := range ImagePlatforms {
		platforms = append(platforms, p.String())
	}
	if err := run(ctx, o.Root, nil, o.Log, "go", "run", "./images/cmd/ballast-images", "--root", o.Root, "--out", staging,
		"--platforms", strings.Join(platforms, ","), "--version", chart.Version, "--registry", chart.Registry); err != nil {
		return fmt.Errorf("building the images: %w", err)
	}
	if err := buildBinaries(ctx, o, chart.Version, rev, logf); err != nil {
		return err
	}
	if err := writeChart(o.Root, filepath.Join(o.Out, ChartAsset(chart.Version))); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(o.Out, LayoutDir), 0o755); err != nil {
		return err
	}
	for _, p := range ImagePlatforms {
		if err := os.Rename(filepath.Join(staging, ArchiveAsset(p)), filepath.Join(o.Out, ArchiveAsset(p))); err != nil {
			return fmt.Errorf("moving the air-gap archive of %s: %w", p, err)
		}
	}
	for _, img := range Images {
		if err := os.Rename(filepath.Join(staging, img), filepath.Join(o.Out, LayoutDir, img)); err != nil {
			return fmt.Errorf("moving the layout of %s: %w", img, err)
		}
	}
	if err := writeSBOMs(o, staging, chart, created); err != nil {
		return err
	}
	if err := os.RemoveAll(staging); err != nil {
		return err
	}
	if err := writeSums(o.Out); err != nil {
		return err
	}
	logf("wrote the release to %s", o.Out)
	return nil
}

// Chart is what a release takes from the chart in the tree.
type Chart struct {
	Version, AppVersion string
	// Registry is global.image.registry.
	Registry string
}

// ReadChart reads the chart's version and image registry under root.
func ReadChart(root string) (Chart, error) {
	var meta struct {
		Version    string `yaml:"version"`
		AppVersion string `yaml:"appVersion"`
	}
	var vals struct {
		Global struct {
			Image struct {
				Registry string `yaml:"registry"`
			} `yaml:"image"`
		} `yaml:"global"`
	}
	for file, v := range map[string]any{"Chart.yaml": &meta, "values.yaml": &vals} {
		raw, err := os.ReadFile(filepath.Join(root, "charts", "ballast", file))
		if err != nil {
			return Chart{}, fmt.Errorf("reading the chart: %w", err)
		}
		if err := yaml.Unmarshal(raw, v); err != nil {
			return Chart{}, fmt.Errorf("reading the chart's %s: %w", file, err)
		}
	}
	c := Chart{Version: meta.Version, AppVersion: meta.AppVersion, Registry: strings.TrimSuffix(vals.Global.Image.Registry, "/")}
	if c.Version == "" || c.Version != c.AppVersion || c.Registry == "" {
		return c, fmt.Errorf("the chart's version %q, appVersion %q and registry %q: want one version and a registry (hack/set-chart-version.sh)",
			c.Version, c.AppVersion, c.Registry)
	}
	return c, nil
}

// buildBinaries cross-compiles every program for every platform, as the
// images are: static, stripped, without local paths, stamped with the
// version and revision.
func buildBinaries(ctx context.Context, o Options, version, rev string, logf func(string, ...any)) error {
	type job struct {
		prog Program
		p    Platform
	}
	var jobs []job
	for _, prog := range Programs {
		for _, p := range BinaryPlatforms {
			jobs = append(jobs, job{prog, p})
		}
	}
	ldflags := fmt.Sprintf("-s -w -X github.com/ballast-sched/ballast/core/version.version=%s -X github.com/ballast-sched/ballast/core/version.revision=%s", version, rev)
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(linkJobs)
	for _, j := range jobs {
		g.Go(func() error {
			start := time.Now()
			env := []string{"CGO_ENABLED=0", "GOWORK=off", "GOOS=" + j.p.OS, "GOARCH=" + j.p.Arch, "GOARM=" + j.p.ARM}
			out := filepath.Join(o.Out, BinaryAsset(j.prog.Name, j.p))
			if err := run(ctx, filepath.Join(o.Root, j.prog.Module), env, nil, "go", "build", "-trimpath", "-ldflags", ldflags, "-o", out, j.prog.Pkg); err != nil {
				return fmt.Errorf("building %s for %s: %w", j.prog.Name, j.p, err)
			}
			logf("built %s for %s in %s", j.prog.Name, j.p, time.Since(start).Round(time.Second))
			return nil
		})
	}
	return g.Wait()
}

// writeChart packs the chart in the tree as the binaries embed it.
func writeChart(root, path string) error {
	dir := filepath.Join(root, "charts", "ballast")
	var files []*loader.BufferedFile
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files = append(files, &loader.BufferedFile{Name: filepath.ToSlash(rel), Data: data})
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the chart: %w", err)
	}
	archive, err := charts.ArchiveFiles(files)
	if err != nil {
		return err
	}
	return os.WriteFile(path, archive, 0o644)
}

// writeSBOMs writes the SBOM of every binary and of every platform's image.
func writeSBOMs(o Options, staging string, chart Chart, created time.Time) error {
	for _, prog := range Programs {
		for _, p := range BinaryPlatforms {
			bin := filepath.Join(o.Out, BinaryAsset(prog.Name, p))
			subject := sbomSubject{name: prog.Name, version: chart.Version, purpose: "APPLICATION", file: bin, binary: bin,
				purl: "pkg:golang/github.com/ballast-sched/ballast@v" + chart.Version + "?type=" + prog.Name + "&os=" + p.OS + "&arch=" + p.Arch}
			if err := writeSBOM(filepath.Join(o.Out, SBOMAsset(BinaryAsset(prog.Name, p))), subject, created); err != nil {
				return err
			}
		}
	}
	for _, img := range Images {
		digests, err := platformDigests(filepath.Join(o.Out, LayoutDir, img))
		if err != nil {
			return err
		}
		for _, p := range ImagePlatforms {
			bin := filepath.Join(staging, "bin", p.Slug(), imageBinaries[img])
			subject := sbomSubject{name: img, version: chart.Version, purpose: "CONTAINER", file: bin, binary: bin,
				purl: fmt.Sprintf("pkg:oci/%s@%s?repository_url=%s/%s&arch=%s", img, digests[p.String()], chart.Registry, img, p.Arch)}
			if err := writeSBOM(filepath.Join(o.Out, ImageSBOMAsset(img, chart.Version, p)), subject, created); err != nil {
				return err
			}
		}
	}
	return nil
}

// platformDigests reads an image's layout: each platform's image digest.
func platformDigests(dir string) (map[string]string, error) {
	p, err := layout.FromPath(dir)
	if err != nil {
		return nil, fmt.Errorf("reading the layout %s: %w", dir, err)
	}
	top, err := p.ImageIndex()
	if err != nil {
		return nil, err
	}
	im, err := top.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		return nil, fmt.Errorf("layout %s: want one image index (%v)", dir, err)
	}
	idx, err := top.ImageIndex(im.Manifests[0].Digest)
	if err != nil {
		return nil, err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, d := range m.Manifests {
		if d.Platform != nil {
			pl := Platform{OS: d.Platform.OS, Arch: d.Platform.Architecture, ARM: strings.TrimPrefix(d.Platform.Variant, "v")}
			out[pl.String()] = d.Digest.String()
		}
	}
	return out, nil
}

// writeSums writes SHA256SUMS over every file of dir, as sha256sum does.
func writeSums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == SumsFile {
			continue
		}
		sum, err := fileSHA256(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, e.Name())
	}
	return os.WriteFile(filepath.Join(dir, SumsFile), []byte(b.String()), 0o644)
}

// source is the release's time (SOURCE_DATE_EPOCH, else the commit's) and
// revision.
func source(root string) (time.Time, string, error) {
	rev, err := gitOut(root, "rev-parse", "HEAD")
	if err != nil {
		return time.Time{}, "", fmt.Errorf("a release is built from a git checkout: %w", err)
	}
	sec := os.Getenv("SOURCE_DATE_EPOCH")
	if sec == "" {
		if sec, err = gitOut(root, "log", "-1", "--format=%ct"); err != nil {
			return time.Time{}, "", err
		}
	}
	n, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("source time %q: %w", sec, err)
	}
	return time.Unix(n, 0).UTC(), rev, nil
}

func gitOut(dir string, args ...string) (string, error) {
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// run runs a command in dir with env added, its output to out (nil:
// returned in the error on failure only).
func run(ctx context.Context, dir string, env []string, out io.Writer, name string, args ...string) error {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clone(os.Environ()), env...)
	if out != nil {
		cmd.Stdout, cmd.Stderr = out, out
		return cmd.Run()
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w\n%s", err, b)
	}
	return nil
}
