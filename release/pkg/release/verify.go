package release

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"helm.sh/helm/v3/pkg/chart/loader"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/airgap"
)

// Verify checks that the release in dir belongs together, reporting every
// problem at once: every asset is there and SHA256SUMS lists each with its
// sum; the chart pulls, by default, exactly the images of every air-gap
// archive and OCI layout (registry, name, tag), each archive holds its
// platform's images under the name `ballast install --images` looks for;
// every binary is for its platform and reports the chart's version; every
// SBOM describes its asset.
func Verify(ctx context.Context, dir string) error {
	var errs []error
	add := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	chrt, err := loader.Load(filepath.Join(dir, chartAssetIn(dir)))
	if err != nil {
		return fmt.Errorf("the release's chart: %w", err)
	}
	version := chrt.Metadata.Version
	if chrt.Metadata.AppVersion != version {
		add(fmt.Errorf("chart %s has appVersion %s: the images are tagged with the chart's version", version, chrt.Metadata.AppVersion))
	}
	add(checkSums(dir, version))
	want, err := ChartImages(ctx, filepath.Join(dir, ChartAsset(version)))
	if err != nil {
		return err
	}
	for _, p := range ImagePlatforms {
		add(checkArchive(dir, p, want))
	}
	for _, img := range Images {
		add(checkLayout(filepath.Join(dir, LayoutDir, img), want))
	}
	revision, err := stampedRevision(ctx, dir, version)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, prog := range Programs {
		for _, p := range BinaryPlatforms {
			add(checkBinary(filepath.Join(dir, BinaryAsset(prog.Name, p)), p, version, revision))
			add(checkSBOM(filepath.Join(dir, SBOMAsset(BinaryAsset(prog.Name, p))), filepath.Join(dir, BinaryAsset(prog.Name, p))))
		}
	}
	for _, img := range Images {
		for _, p := range ImagePlatforms {
			add(checkSBOM(filepath.Join(dir, ImageSBOMAsset(img, version, p)), ""))
		}
	}
	return errors.Join(errs...)
}

// chartAssetIn finds the chart archive of a release directory.
func chartAssetIn(dir string) string {
	matches, _ := filepath.Glob(filepath.Join(dir, "ballast-*.tgz"))
	if len(matches) != 1 {
		return ChartAsset("unknown")
	}
	return filepath.Base(matches[0])
}

// ChartImages renders a chart archive with its default values, as `helm
// install` or `ballast install` would, and returns the image of every
// container of its Deployments.
func ChartImages(ctx context.Context, archive string) ([]string, error) {
	chrt, err := loader.Load(archive)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", archive, err)
	}
	manifest, _, err := charts.Render(ctx, charts.RenderOptions{Chart: chrt})
	if err != nil {
		return nil, err
	}
	var images []string
	for _, doc := range strings.Split(manifest, "\n---") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		for _, c := range append(d.Spec.Template.Spec.InitContainers, d.Spec.Template.Spec.Containers...) {
			if !slices.Contains(images, c.Image) {
				images = append(images, c.Image)
			}
		}
	}
	slices.Sort(images)
	if len(images) == 0 {
		return nil, fmt.Errorf("chart %s renders no Deployment", archive)
	}
	return images, nil
}

// checkSums checks that SHA256SUMS lists every asset of the release, and
// nothing else, with its sum.
func checkSums(dir, version string) error {
	raw, err := os.ReadFile(filepath.Join(dir, SumsFile))
	if err != nil {
		return err
	}
	listed := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			return fmt.Errorf("%s: line %q is not <sha256>  <file>", SumsFile, sc.Text())
		}
		listed[name] = sum
	}
	var errs []error
	for _, a := range Assets(version) {
		sum, ok := listed[a]
		if !ok {
			errs = append(errs, fmt.Errorf("%s does not list %s", SumsFile, a))
			continue
		}
		delete(listed, a)
		got, err := fileSHA256(filepath.Join(dir, a))
		if err != nil {
			errs = append(errs, err)
		} else if got != sum {
			errs = append(errs, fmt.Errorf("%s: %s has sha256 %s, the file %s", SumsFile, a, sum, got))
		}
	}
	for name := range listed {
		errs = append(errs, fmt.Errorf("%s lists %s, which is no release asset", SumsFile, name))
	}
	return errors.Join(errs...)
}

// checkArchive checks that a platform's air-gap archive is where `ballast
// install --images DIR` looks for it and holds exactly the chart's images,
// for that platform.
func checkArchive(dir string, p Platform, want []string) error {
	name := ArchiveAsset(p)
	if name != airgap.ArchiveName(p.Arch) {
		return fmt.Errorf("the release names the %s archive %s, ballast install --images looks for %s", p, name, airgap.ArchiveName(p.Arch))
	}
	a, err := airgap.Read(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if a.Arch != p.Arch {
		return fmt.Errorf("%s holds %s images", name, a.Arch)
	}
	var got []string
	for _, t := range a.Tags {
		got = append(got, t.String())
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		return fmt.Errorf("%s holds %v; the chart pulls %v", name, got, want)
	}
	return nil
}

// checkLayout checks that an image's OCI layout is named as one of the
// chart's images and holds every image platform.
func checkLayout(dir string, want []string) error {
	p, err := layout.FromPath(dir)
	if err != nil {
		return fmt.Errorf("layout %s: %w", dir, err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil || len(m.Manifests) != 1 {
		return fmt.Errorf("layout %s: want one image index (%v)", dir, err)
	}
	ref := m.Manifests[0].Annotations["io.containerd.image.name"]
	if !slices.Contains(want, ref) {
		return fmt.Errorf("layout %s is %q, which the chart does not pull (it pulls %v)", dir, ref, want)
	}
	digests, err := platformDigests(dir)
	if err != nil {
		return err
	}
	for _, pl := range ImagePlatforms {
		if digests[pl.String()] == "" {
			return fmt.Errorf("layout %s has no image for %s", dir, pl)
		}
	}
	return nil
}

// stampedRevision runs this machine's ballast of the release, which must
// report version, and returns the commit it is stamped with (the full
// hash, as the build sets it).
func stampedRevision(ctx context.Context, dir, version string) (string, error) {
	host := Platform{OS: runtime.GOOS, Arch: runtime.GOARCH}
	if host.Arch == "arm" {
		host.ARM = "7"
	}
	bin := filepath.Join(dir, BinaryAsset("ballast", host))
	out, err := exec.CommandContext(ctx, bin, "version").Output()
	if err != nil {
		return "", fmt.Errorf("running %s version (the release's binary for this machine): %w", filepath.Base(bin), err)
	}
	m := regexp.MustCompile(`^ballast (\S+) \(.*revision ([0-9a-f]{7,})\)`).FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil || m[1] != version {
		return "", fmt.Errorf("%s reports %q, want version %s and a revision", filepath.Base(bin), strings.TrimSpace(string(out)), version)
	}
	raw, err := os.ReadFile(bin)
	if err != nil {
		return "", err
	}
	full := regexp.MustCompile(m[2] + `[0-9a-f]{` + strconv.Itoa(40-len(m[2])) + `}`).Find(raw)
	if full == nil {
		return "", fmt.Errorf("%s reports revision %s, and holds no full hash of it", filepath.Base(bin), m[2])
	}
	return string(full), nil
}

// checkBinary checks a binary's platform and build settings, and that it is
// stamped with the release's version and revision. (A binary built with
// -trimpath records no -ldflags, so the stamped strings are looked for in
// the binary itself.)
func checkBinary(path string, p Platform, version, revision string) error {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["GOOS"] != p.OS || settings["GOARCH"] != p.Arch || (p.ARM != "" && settings["GOARM"] != p.ARM) {
		return fmt.Errorf("%s is built for %s/%s (GOARM %q), not %s", filepath.Base(path), settings["GOOS"], settings["GOARCH"], settings["GOARM"], p)
	}
	if settings["-trimpath"] != "true" || settings["CGO_ENABLED"] != "0" {
		return fmt.Errorf("%s is not built static and without local paths", filepath.Base(path))
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Contains(raw, []byte(revision)) || !bytes.Contains(raw, []byte(version)) {
		return fmt.Errorf("%s is not stamped with version %s and revision %s", filepath.Base(path), version, revision)
	}
	return nil
}

// checkSBOM checks that an SBOM is an SPDX 2.3 document describing one
// package, with the checksum of file when given.
func checkSBOM(path, file string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var doc SPDX
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	if doc.SPDXVersion != "SPDX-2.3" || len(doc.Packages) < 2 || len(doc.Relationships) == 0 || doc.Relationships[0].Type != "DESCRIBES" {
		return fmt.Errorf("%s is not an SPDX 2.3 document describing a package and its modules", filepath.Base(path))
	}
	if file == "" {
		return nil
	}
	sum, err := fileSHA256(file)
	if err != nil {
		return err
	}
	if cs := doc.Packages[0].Checksums; len(cs) != 1 || cs[0].Value != sum {
		return fmt.Errorf("%s describes another file than %s", filepath.Base(path), filepath.Base(file))
	}
	return nil
}
