package app

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/images/pkg/build"
)

// flagpole holds the command's flags.
type flagpole struct {
	Root      string
	Out       string
	Platforms []string
	Version   string
	Registry  string
	Push      bool
	PlainHTTP bool
	KeepPaths bool
}

// defaultPlatforms are the platforms of the release: PCs, 64-bit and 32-bit
// Raspberry Pis.
var defaultPlatforms = []string{"linux/amd64", "linux/arm64", "linux/arm/v7"}

func newFlagSet(f *flagpole) *pflag.FlagSet {
	fs := pflag.NewFlagSet("ballast-images", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: ballast-images [flags]\n\n"+
			"Cross-compiles load-watcher, ballast-scheduler and ballast-descheduler and writes their images to --out:\n"+
			"an OCI layout per image, an air-gap archive per platform (%s<os>-<arch>%s) and %s.\n\nFlags:\n",
			archivePrefix, archiveSuffix, sumsFile)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.Root, "root", "", "repository root (default: the nearest directory at or above the working directory holding Ballast's core/go.mod)")
	fs.StringVar(&f.Out, "out", "_output/images", "output directory, relative to --root unless absolute")
	fs.StringSliceVar(&f.Platforms, "platforms", defaultPlatforms, "platforms to build, comma separated; one of "+strings.Join(supportedPlatforms(), ", "))
	fs.StringVar(&f.Version, "version", "", "version the binaries report and the images' tag, X.Y.Z[-pre] without a v (default: the chart's appVersion, the tag the chart pulls)")
	fs.StringVar(&f.Registry, "registry", "", "registry and path prefix of the image names (default: the chart's global.image.registry)")
	fs.BoolVar(&f.KeepPaths, "keep-paths", false, "build without -trimpath, so a build reuses the packages `go test` compiled (the binaries then hold local source paths: for test lanes, never for a release; pushed only with --plain-http)")
	fs.BoolVar(&f.Push, "push", false, "also push each multi-platform index to the registry (default keychain: docker login credentials); a release version X.Y.Z is also tagged X.Y")
	fs.BoolVar(&f.PlainHTTP, "plain-http", false, "with --push, talk to the registry over plain HTTP (a registry on your own network without TLS); "+
		"loopback and private addresses fall back to it by themselves")
	return fs
}

// config is the validated, completed form of the flags.
type config struct {
	root       string
	out        string
	platforms  []v1.Platform
	version    string
	registry   string
	push       bool
	plainHTTP  bool
	keepPaths  bool
	chart      chartDefaults
	components []component
}

// nameOptions are how the images' names are parsed: strictly, and over
// plain HTTP with --plain-http.
func (c *config) nameOptions() []name.Option {
	opts := []name.Option{name.StrictValidation}
	if c.plainHTTP {
		opts = append(opts, name.Insecure)
	}
	return opts
}

// semver is X.Y.Z with an optional pre-release, the form of a tag the
// chart's appVersion matches ('+' cannot appear in an image tag).
var semver = regexp.MustCompile(`^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// complete checks every flag, reporting all errors at once, and fills the
// defaults that come from the chart.
func (f *flagpole) complete(fs *pflag.FlagSet) (*config, error) {
	var errs []error
	root, err := findRoot(f.Root)
	if err != nil {
		return nil, fmt.Errorf("--root: %w", err)
	}
	chart, err := readChart(root)
	if err != nil {
		return nil, fmt.Errorf("--root %s: %w", root, err)
	}
	cfg := &config{root: root, push: f.Push, plainHTTP: f.PlainHTTP, keepPaths: f.KeepPaths, chart: *chart, components: chart.components}
	// A plain-HTTP registry is one on the user's own network, where a test
	// build may go; a registry others pull from gets no local paths.
	if f.KeepPaths && f.Push && !f.PlainHTTP {
		errs = append(errs, errors.New("--keep-paths: binaries holding local source paths are pushed only to a plain-HTTP registry of your own (--plain-http); drop --keep-paths"))
	}
	if f.PlainHTTP && !f.Push {
		errs = append(errs, errors.New("--plain-http: says how to reach the registry of --push, which is not given"))
	}

	seen := map[string]bool{}
	if len(f.Platforms) == 0 {
		errs = append(errs, errors.New("--platforms: at least one platform is required"))
	}
	for _, s := range f.Platforms {
		p, err := build.ParsePlatform(s)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("--platforms: %w", err))
		case platforms[p.String()] == nil:
			errs = append(errs, fmt.Errorf("--platforms: %q is not supported; want one of %s", s, strings.Join(supportedPlatforms(), ", ")))
		case seen[p.String()]:
			errs = append(errs, fmt.Errorf("--platforms: %s is given twice", s))
		default:
			seen[p.String()] = true
			cfg.platforms = append(cfg.platforms, p)
		}
	}

	cfg.version = f.Version
	if !fs.Changed("version") {
		cfg.version = chart.appVersion
	}
	if !semver.MatchString(cfg.version) {
		hint := ""
		if semver.MatchString(strings.TrimPrefix(cfg.version, "v")) {
			hint = " (drop the leading v)"
		}
		errs = append(errs, fmt.Errorf("--version: %q is not X.Y.Z[-pre]%s", cfg.version, hint))
	}

	cfg.registry = strings.TrimSuffix(f.Registry, "/")
	if !fs.Changed("registry") {
		cfg.registry = chart.registry
	}
	for _, c := range cfg.components {
		if _, err := name.NewRepository(cfg.registry+"/"+c.repository, cfg.nameOptions()...); err != nil {
			errs = append(errs, fmt.Errorf("--registry: %q: %w", cfg.registry, err))
			break
		}
	}

	if f.Out == "" {
		errs = append(errs, errors.New("--out: required"))
	}
	cfg.out = f.Out
	if !filepath.IsAbs(cfg.out) {
		cfg.out = filepath.Join(root, cfg.out)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("invalid flags:\n%w", err)
	}
	return cfg, nil
}

// groundModule is what the go.mod of the repository's ground floor, core/,
// declares.
const groundModule = "module github.com/ballast-sched/ballast/core"

// findRoot returns root if set, else the nearest directory at or above
// the working directory whose core/go.mod declares Ballast's ground floor.
func findRoot(root string) (string, error) {
	if root != "" {
		return filepath.Abs(root)
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if gomod, err := os.ReadFile(filepath.Join(dir, "core", "go.mod")); err == nil && strings.HasPrefix(string(gomod), groundModule+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no Ballast repository (core/go.mod) at or above the working directory; give the repository root")
		}
		dir = parent
	}
}

// goPlatform is how the go command builds for a platform, and the name of
// its air-gap archive.
type goPlatform struct {
	goarch string
	goarm  string
	// slug names the platform in file names the way k3s names its own
	// air-gap archives: linux/arm/v7 is "linux-arm".
	slug string
}

// platforms are the platforms Go builds static Linux programs for that
// k3s runs on.
var platforms = map[string]*goPlatform{
	"linux/amd64":   {goarch: "amd64", slug: "linux-amd64"},
	"linux/arm64":   {goarch: "arm64", slug: "linux-arm64"},
	"linux/arm/v7":  {goarch: "arm", goarm: "7", slug: "linux-arm"},
	"linux/riscv64": {goarch: "riscv64", slug: "linux-riscv64"},
	"linux/s390x":   {goarch: "s390x", slug: "linux-s390x"},
}

func supportedPlatforms() []string { return slices.Sorted(maps.Keys(platforms)) }
