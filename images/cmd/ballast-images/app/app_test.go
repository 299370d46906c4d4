package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/ballast-sched/ballast/images/pkg/build"
)

// repoRoot is the repository this test runs in.
const repoRoot = "../../../.."

// fakeRoot returns a repository root with the real chart and, in place of
// each component, a tiny program. load-watcher's prints the version its
// version package was linked with, so the -X flags are checked end to end.
func fakeRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range []string{"Chart.yaml", "values.yaml"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, chartPath, f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, chartPath, f), string(b))
	}
	// A module per component, each building alone on the ground floor's.
	const ballast = "github.com/ballast-sched/ballast/"
	writeFile(t, filepath.Join(root, "core/go.mod"), "module "+ballast+"core\n\ngo 1.26\n")
	for _, m := range []string{"load-watcher", "scheduler", "descheduler"} {
		writeFile(t, filepath.Join(root, m, "go.mod"), "module "+ballast+m+"\n\ngo 1.26\n\nrequire "+ballast+
			"core v0.0.0-00010101000000-000000000000\n\nreplace "+ballast+"core => ../core\n")
	}
	writeFile(t, filepath.Join(root, "core/version/version.go"),
		"package version\n\nvar version, revision = \"dev\", \"\"\n\nfunc Line() string { return version + \" \" + revision }\n")
	writeFile(t, filepath.Join(root, "load-watcher/cmd/load-watcher/main.go"),
		"package main\n\nimport \"github.com/ballast-sched/ballast/core/version\"\n\nfunc main() { println(version.Line()) }\n")
	for _, c := range []string{"scheduler/cmd/ballast-scheduler", "descheduler/cmd/ballast-descheduler"} {
		writeFile(t, filepath.Join(root, c, "main.go"), "package main\n\nfunc main() { println(\"hi\") }\n")
	}
	return root
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut strings.Builder
	err = Run(context.Background(), Streams{Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), err
}

func TestBuildsEveryImageFromTheChartDefaults(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles six programs")
	}
	if _, err := os.Stat(build.CACertificatesPath); err != nil {
		t.Skip("no CA bundle on this host (hack/install-test-deps.sh installs it)")
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1717243200") // 2024-06-01T12:00:00Z
	root := fakeRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	stdout, stderr, err := run(t, "--root", root, "--out", out, "--platforms", "linux/amd64,linux/arm/v7")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}

	// The chart's defaults: registry, repositories and appVersion as the tag.
	appVersion := readChartAppVersion(t)
	tags := map[string]name.Tag{}
	for _, repo := range []string{"load-watcher", "ballast-scheduler", "ballast-descheduler"} {
		tag, err := name.NewTag("ghcr.io/ballast-sched/" + repo + ":" + appVersion)
		if err != nil {
			t.Fatal(err)
		}
		tags[repo] = tag
	}

	archives := map[string]v1.Platform{
		"ballast-images-linux-amd64.tar": build.MustParsePlatform("linux/amd64"),
		"ballast-images-linux-arm.tar":   build.MustParsePlatform("linux/arm/v7"),
	}
	for file, platform := range archives {
		for repo, tag := range tags {
			img, err := tarball.ImageFromPath(filepath.Join(out, file), &tag)
			if err != nil {
				t.Fatalf("%s: %s: %v", file, tag, err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if got := cf.Platform(); !got.Equals(platform) {
				t.Errorf("%s: %s is for %s, want %s", file, repo, got, platform)
			}
			wantLabels := map[string]string{
				"org.opencontainers.image.title":       repo,
				"org.opencontainers.image.version":     appVersion,
				"org.opencontainers.image.source":      "https://github.com/ballast-sched/ballast",
				"org.opencontainers.image.licenses":    "Apache-2.0",
				"org.opencontainers.image.created":     "2024-06-01T12:00:00Z",
				"org.opencontainers.image.description": cf.Config.Labels["org.opencontainers.image.description"],
				// No revision: the fake root is no git checkout.
			}
			if diff := cmp.Diff(wantLabels, cf.Config.Labels); diff != "" {
				t.Errorf("%s: %s labels (-want,+got):\n%s", file, repo, diff)
			}
			if !strings.HasPrefix(cf.Config.Labels["org.opencontainers.image.description"], "Ballast ") {
				t.Errorf("%s: %s has no description", file, repo)
			}
			if want := "/usr/local/bin/" + repo; cf.Config.Entrypoint[0] != want || cf.Config.User != "65532:65532" {
				t.Errorf("%s: %s entrypoint %v user %q, want %s as 65532:65532", file, repo, cf.Config.Entrypoint, cf.Config.User, want)
			}
		}
	}

	// SHA256SUMS lists exactly the archives, in sha256sum's format.
	sums := readSums(t, filepath.Join(out, "SHA256SUMS"))
	if len(sums) != len(archives) {
		t.Errorf("SHA256SUMS lists %v, want the %d archives", sums, len(archives))
	}
	for file := range archives {
		sum, err := sha256File(filepath.Join(out, file))
		if err != nil {
			t.Fatal(err)
		}
		if got := sums[file]; got != fmt.Sprintf("%x", sum) {
			t.Errorf("SHA256SUMS has %s for %s, want %x", got, file, sum)
		}
	}

	// One OCI layout per image, holding both platforms.
	amd64Digests := map[string]v1.Hash{}
	for repo := range tags {
		idx := layoutIndex(t, filepath.Join(out, repo))
		m, err := idx.IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range m.Manifests {
			got = append(got, d.Platform.String())
			if d.Platform.Architecture == "amd64" {
				amd64Digests[repo] = d.Digest
			}
		}
		if diff := cmp.Diff([]string{"linux/amd64", "linux/arm/v7"}, got); diff != "" {
			t.Errorf("%s layout platforms (-want,+got):\n%s", repo, diff)
		}
	}

	// The size table: a header, a rule and one row per image.
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 5 || lines[0] != "| Image | linux/amd64 | linux/arm/v7 |" || !strings.HasPrefix(lines[2], "| load-watcher | ") ||
		!strings.HasSuffix(lines[2], " MiB |") {
		t.Errorf("size table:\n%s", stdout)
	}

	// The binary reports the version it was linked with.
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		lw := filepath.Join(out, "bin", "linux-amd64", "load-watcher")
		b, err := exec.Command(lw).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", lw, err, b)
		}
		if got := strings.TrimSpace(string(b)); got != appVersion {
			t.Errorf("load-watcher reports version %q, want %q", got, appVersion)
		}
	}

	// Again for one platform: the same image, and no archive left of the other.
	if _, stderr, err := run(t, "--root", root, "--out", out, "--platforms", "linux/amd64"); err != nil {
		t.Fatalf("second Run: %v\n%s", err, stderr)
	}
	for repo, want := range amd64Digests {
		m, err := layoutIndex(t, filepath.Join(out, repo)).IndexManifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Manifests) != 1 || m.Manifests[0].Digest != want {
			t.Errorf("%s: rebuilt linux/amd64 image is %v, want %s", repo, m.Manifests, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "ballast-images-linux-arm.tar")); !os.IsNotExist(err) {
		t.Errorf("the linux/arm archive of the first run is still there (%v)", err)
	}
	if sums := readSums(t, filepath.Join(out, "SHA256SUMS")); len(sums) != 1 || sums["ballast-images-linux-amd64.tar"] == "" {
		t.Errorf("SHA256SUMS after the second run: %v", sums)
	}
}

func readChartAppVersion(t *testing.T) string {
	t.Helper()
	c, err := readChart(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	return c.appVersion
}

// layoutIndex returns the image index the layout in dir names.
func layoutIndex(t *testing.T, dir string) v1.ImageIndex {
	t.Helper()
	idx, err := build.ReadLayout(dir)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	s := bufio.NewScanner(f)
	for s.Scan() {
		sum, file, ok := strings.Cut(s.Text(), "  ")
		if !ok {
			t.Fatalf("%s: line %q is not sha256sum's format", path, s.Text())
		}
		sums[file] = sum
	}
	return sums
}

func TestRunRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string // every flag the error must name
	}{
		{name: "unknown platform", args: []string{"--platforms=linux/amd64,linux/mips"}, want: []string{`--platforms: "linux/mips" is not supported`}},
		{name: "malformed platform", args: []string{"--platforms=amd64"}, want: []string{"--platforms: platform \"amd64\""}},
		{name: "platform twice", args: []string{"--platforms=linux/arm/v7,linux/arm/v7"}, want: []string{"--platforms: linux/arm/v7 is given twice"}},
		{name: "no platform", args: []string{"--platforms="}, want: []string{"--platforms: at least one"}},
		{name: "version with a v", args: []string{"--version=v0.1.0"}, want: []string{"--version", "drop the leading v"}},
		{name: "version not semver", args: []string{"--version=latest"}, want: []string{`--version: "latest"`}},
		{name: "bad registry", args: []string{"--registry=Ghcr.io/UPPER"}, want: []string{"--registry"}},
		{name: "local paths pushed", args: []string{"--keep-paths", "--push"}, want: []string{"--keep-paths", "--plain-http"}},
		{name: "plain HTTP without a push", args: []string{"--plain-http"}, want: []string{"--plain-http", "--push"}},
		{name: "no output directory", args: []string{"--out="}, want: []string{"--out: required"}},
		{name: "every error at once", args: []string{"--platforms=linux/mips", "--version=1.0"},
			want: []string{"--platforms", "--version"}},
		{name: "root without the chart", args: []string{"--root=" + os.TempDir()}, want: []string{"--root"}},
		{name: "stray argument", args: []string{"build"}, want: []string{`unexpected arguments ["build"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--root=" + repoRoot}, tt.args...)
			_, stderr, err := run(t, args...)
			if err == nil {
				t.Fatalf("Run(%q) = nil, want an error", tt.args)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Run(%q) = %v, want it to contain %q", tt.args, err, w)
				}
			}
			if strings.Contains(stderr, "building") {
				t.Errorf("Run(%q) started building:\n%s", tt.args, stderr)
			}
		})
	}
}

// The -X flags name variables of the real version package: a wrong name
// is silently ignored by the linker and the binaries report "dev".
func TestVersionPackageIsReal(t *testing.T) {
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "core", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	module, _, _ := strings.Cut(strings.TrimPrefix(string(gomod), "module "), "\n")
	if got, want := versionPackage, module+"/version"; got != want {
		t.Errorf("versionPackage = %s, want %s", got, want)
	}
	src, err := os.ReadFile(filepath.Join(repoRoot, "core/version/version.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"\tversion  = ", "\trevision = "} {
		if !strings.Contains(string(src), v) {
			t.Errorf("core/version declares no %q", strings.TrimSpace(v))
		}
	}
}

// make push: every image, with all its platforms, lands in the user's
// registry under the version and, for a release, X.Y; what the registry
// serves is what was written to the layouts.
func TestPushesToAPlainHTTPRegistry(t *testing.T) {
	if _, err := os.Stat(build.CACertificatesPath); err != nil {
		t.Skip("no CA bundle on this host (hack/install-test-deps.sh installs it)")
	}
	t.Setenv("SOURCE_DATE_EPOCH", "1717243200")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	root := fakeRoot(t)
	out := filepath.Join(t.TempDir(), "out")
	_, stderr, err := run(t, "--root", root, "--out", out, "--platforms", "linux/amd64,linux/arm64",
		"--version", "1.4.2", "--registry", host+"/homelab/ballast/", "--push", "--plain-http", "--keep-paths")
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr)
	}
	for _, repo := range []string{"load-watcher", "ballast-scheduler", "ballast-descheduler"} {
		want, err := layoutIndex(t, filepath.Join(out, repo)).Digest()
		if err != nil {
			t.Fatal(err)
		}
		for _, tag := range []string{"1.4.2", "1.4"} {
			ref, err := name.NewTag(host+"/homelab/ballast/"+repo+":"+tag, name.Insecure)
			if err != nil {
				t.Fatal(err)
			}
			idx, err := remote.Index(ref)
			if err != nil {
				t.Fatalf("the registry does not serve %s: %v", ref, err)
			}
			got, err := idx.Digest()
			if err != nil {
				t.Fatal(err)
			}
			m, err := idx.IndexManifest()
			if err != nil {
				t.Fatal(err)
			}
			if got != want || len(m.Manifests) != 2 {
				t.Errorf("%s is %s with %d platforms, want the layout's %s with 2", ref, got, len(m.Manifests), want)
			}
		}
	}
	if !strings.Contains(stderr, "pushed "+host+"/homelab/ballast/load-watcher:1.4") {
		t.Errorf("no push reported:\n%s", stderr)
	}
}

// --plain-http makes a registry by any name plain HTTP, not only the
// loopback and private addresses go-containerregistry guesses for.
func TestPlainHTTPNamesAnyRegistry(t *testing.T) {
	for _, plain := range []bool{false, true} {
		cfg := &config{plainHTTP: plain}
		tag, err := name.NewTag("registry.lan:5000/ballast/load-watcher:1.0.0", cfg.nameOptions()...)
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "https", true: "http"}[plain]
		if got := tag.Context().Registry.Scheme(); got != want {
			t.Errorf("plainHTTP=%t: scheme %s, want %s", plain, got, want)
		}
	}
}

func TestMinorTag(t *testing.T) {
	tests := []struct {
		version string
		want    string
		ok      bool
	}{
		{version: "0.1.0", want: "0.1", ok: true},
		{version: "1.12.3", want: "1.12", ok: true},
		// A pre-release must not move the X.Y tag users follow.
		{version: "0.2.0-rc.1", ok: false},
	}
	for _, tt := range tests {
		got, ok := minorTag(tt.version)
		if got != tt.want || ok != tt.ok {
			t.Errorf("minorTag(%q) = %q, %v; want %q, %v", tt.version, got, ok, tt.want, tt.ok)
		}
	}
}
