// Package version is the Ballast version a binary was built from. Every
// Ballast binary (load-watcher, ballast-scheduler, ballast-descheduler and
// the ballast CLI) prints it for --version.
//
// The release build sets it at link time:
//
//	go build -ldflags "-X github.com/ballast-sched/ballast/core/version.version=0.1.0 \
//	  -X github.com/ballast-sched/ballast/core/version.revision=$(git rev-parse HEAD)"
//
// A plain go build reports "dev". The Kubernetes version comes from the
// Kubernetes modules the binary links, so it needs no flag.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at link time with -X; see the package comment.
var (
	version  = "dev"
	revision = ""
)

// Version returns the Ballast version without a leading v, e.g. "0.1.0",
// or "dev" when the build did not set one.
func Version() string { return version }

// Revision returns the commit the binary was built from: the one set at
// link time, else the one the go command stamped (-buildvcs), else "".
func Revision() string {
	if revision != "" {
		return revision
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}

// kubernetesModules are the modules whose version tells the Kubernetes
// line, most telling first. The k8s.io/kubernetes module is tagged
// v1.N.M; the others (staging repositories) are tagged v0.N.M for the same
// release.
var kubernetesModules = []string{
	"k8s.io/kubernetes",
	"k8s.io/component-base",
	"k8s.io/client-go",
	"k8s.io/apimachinery",
}

// Kubernetes returns the Kubernetes release the binary links, e.g.
// "v1.36.3", or "" when it links none. It reads the module versions the go
// command records in a binary; a test binary records none.
func Kubernetes() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	return kubernetesFrom(bi.Deps)
}

func kubernetesFrom(deps []*debug.Module) string {
	linked := make(map[string]string, len(deps))
	for _, d := range deps {
		v := d.Version
		if d.Replace != nil && d.Replace.Version != "" {
			v = d.Replace.Version
		}
		linked[d.Path] = v
	}
	for _, path := range kubernetesModules {
		v, ok := linked[path]
		if !ok || !strings.HasPrefix(v, "v") {
			continue
		}
		if rest, ok := strings.CutPrefix(v, "v0."); ok && path != "k8s.io/kubernetes" {
			v = "v1." + rest
		}
		return v
	}
	return ""
}

// Line returns what program prints for --version, e.g.
//
//	ballast-scheduler 0.1.0 (kubernetes v1.36.3, revision 5bb741c0d2e4)
func Line(program string) string {
	return line(program, Version(), Kubernetes(), Revision())
}

func line(program, version, kubernetes, revision string) string {
	var details []string
	if kubernetes != "" {
		details = append(details, "kubernetes "+kubernetes)
	}
	if revision != "" {
		details = append(details, "revision "+shortRevision(revision))
	}
	if len(details) == 0 {
		return program + " " + version
	}
	return fmt.Sprintf("%s %s (%s)", program, version, strings.Join(details, ", "))
}

// shortRevision keeps the first 12 hex digits of a commit, as git does for
// abbreviations that stay unique in large repositories.
func shortRevision(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

// Info is what a program says of its build, as one document
// (`ballast version -o json`).
type Info struct {
	Program string `json:"program"`
	// Version is the Ballast version, "dev" for a plain go build.
	Version string `json:"version"`
	// Revision is the commit, when known.
	Revision string `json:"revision,omitempty"`
	// Kubernetes is the Kubernetes release the program links, when any.
	Kubernetes string `json:"kubernetes,omitempty"`
	// Go is the Go release it was built with.
	Go string `json:"go"`
	// Platform is GOOS/GOARCH.
	Platform string `json:"platform"`
}

// Get returns program's Info.
func Get(program string) Info {
	return Info{
		Program: program, Version: Version(), Revision: Revision(), Kubernetes: Kubernetes(),
		Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
	}
}
