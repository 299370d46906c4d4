package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// pkg is this package's import path, the prefix of the -X flags.
const pkg = "github.com/ballast-sched/ballast/core/version"

func TestKubernetesFrom(t *testing.T) {
	tests := []struct {
		name string
		deps []*debug.Module
		want string
	}{
		{name: "no Kubernetes module", deps: []*debug.Module{{Path: "github.com/spf13/pflag", Version: "v1.0.10"}}, want: ""},
		{name: "k8s.io/kubernetes is the release itself",
			deps: []*debug.Module{{Path: "k8s.io/client-go", Version: "v0.36.3"}, {Path: "k8s.io/kubernetes", Version: "v1.36.3"}},
			want: "v1.36.3"},
		// client-go v0.36.3 ships with Kubernetes v1.36.3.
		{name: "staging module maps v0.N to v1.N", deps: []*debug.Module{{Path: "k8s.io/client-go", Version: "v0.36.3"}}, want: "v1.36.3"},
		{name: "a replace wins over the requirement",
			deps: []*debug.Module{{Path: "k8s.io/component-base", Version: "v0.35.0", Replace: &debug.Module{Path: "k8s.io/component-base", Version: "v0.36.3"}}},
			want: "v1.36.3"},
		// A replace by a directory has no version: the next module decides.
		{name: "a directory replace is skipped",
			deps: []*debug.Module{
				{Path: "k8s.io/kubernetes", Version: "(devel)"},
				{Path: "k8s.io/apimachinery", Version: "v0.36.1"},
			},
			want: "v1.36.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := kubernetesFrom(tt.deps); got != tt.want {
				t.Errorf("kubernetesFrom() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		name                          string
		version, kubernetes, revision string
		want                          string
	}{
		{name: "plain build", version: "dev", want: "ballast dev"},
		{name: "release", version: "0.1.0", kubernetes: "v1.36.3",
			revision: "5bb741c0d2e4f00dfeed00dfeed00dfeed00dfee",
			want:     "ballast 0.1.0 (kubernetes v1.36.3, revision 5bb741c0d2e4)"},
		{name: "no Kubernetes", version: "0.1.0", revision: "abc", want: "ballast 0.1.0 (revision abc)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := line("ballast", tt.version, tt.kubernetes, tt.revision); got != tt.want {
				t.Errorf("line() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLinkTimeFlags links a program with the -X flags the image build
// passes: a flag naming a variable that does not exist is silently ignored
// by the linker, so only a real link shows that they reach this package.
// A test binary records no modules, so the Kubernetes version too is seen
// only here.
func TestLinkTimeFlags(t *testing.T) {
	k8s, err := os.ReadFile("../../hack/k8s-version") // the Kubernetes line every package is on
	if err != nil {
		t.Fatal(err)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := filepath.Join(t.TempDir(), "printversion")
	build := exec.Command(gobin, "build", "-o", bin,
		"-ldflags", "-X "+pkg+".version=1.2.3 -X "+pkg+".revision=0123456789abcdef",
		"./testdata/printversion")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := "printversion 1.2.3 (kubernetes " + strings.TrimSpace(string(k8s)) + ", revision 0123456789ab)"
	if got := strings.TrimSpace(string(out)); got != want {
		t.Errorf("linked binary printed %q, want %q", got, want)
	}
}

func TestDefaultVersionIsDev(t *testing.T) {
	if Version() != "dev" {
		t.Errorf("Version() = %q without -X, want dev", Version())
	}
}
