// Package consumers holds Ballast's component modules to what a program of
// someone else's gets when it requires one of them: the modules under
// test/consumers, outside go.work, each requiring one component module as
// a user would (a kube-scheduler with the LoadAware plugin; a program that
// reads load-watcher with the Go client), must build alone, be tidy, and
// pull none of the weight that belongs to Ballast's installer, simulator or
// tests.
package consumers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

const ballast = "github.com/ballast-sched/ballast/"

// forbidden are modules no consumer of a component may get from Ballast:
// the Helm SDK and k3s's helm-controller (the installer), the simulator and
// gonum (its oracle), go-containerregistry (the images), etcd's server (the
// in-process cluster).
var forbidden = []string{
	"helm.sh/helm",
	"github.com/k3s-io/helm-controller",
	ballast + "simulator",
	ballast + "installer",
	ballast + "cluster",
	ballast + "charts",
	"gonum.org/v1/gonum",
	"github.com/google/go-containerregistry",
	"go.etcd.io/etcd/server",
}

// upstreamGraph are forbidden modules that the modules kube-scheduler is
// built on list in their own go.mod (k8s.io/apiserver and k8s.io/kubernetes
// require etcd's server, google.golang.org/grpc requires gonum): they are in
// the graph of every program built on kube-scheduler's command, so for them
// the test holds only that no Ballast module requires them and that no
// package of them is built.
var upstreamGraph = []string{"go.etcd.io/etcd/server", "gonum.org/v1/gonum"}

func under(path, prefix string) bool { return path == prefix || strings.HasPrefix(path, prefix+"/") }

func isForbidden(path string) bool {
	return slices.ContainsFunc(forbidden, func(f string) bool { return under(path, f) })
}

// goCmd runs the go command in dir outside the workspace.
func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out
}

func TestConsumers(t *testing.T) {
	for _, tc := range []struct {
		dir string
		// ballast are the Ballast modules the consumer builds with.
		ballast []string
	}{
		{dir: "scheduler-plugin", ballast: []string{"core", "load-watcher", "scheduler"}},
		{dir: "load-watcher-client", ballast: []string{"core"}},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			dir := filepath.Join("..", "..", "test", "consumers", tc.dir)
			goCmd(t, dir, "build", "-o", os.DevNull, ".")
			goCmd(t, dir, "vet", ".")
			goCmd(t, dir, "mod", "tidy", "-diff")

			// What it requires, and the modules of the packages it builds.
			var mod struct{ Require []struct{ Path string } }
			if err := json.Unmarshal(goCmd(t, dir, "mod", "edit", "-json"), &mod); err != nil {
				t.Fatal(err)
			}
			var ours []string
			for _, r := range mod.Require {
				if isForbidden(r.Path) {
					t.Errorf("go.mod requires %s", r.Path)
				}
				if rel, ok := strings.CutPrefix(r.Path, ballast); ok {
					ours = append(ours, rel)
				}
			}
			sort.Strings(ours)
			if !slices.Equal(ours, tc.ballast) {
				t.Errorf("builds with Ballast's %v, want %v", ours, tc.ballast)
			}
			for _, m := range strings.Fields(string(goCmd(t, dir, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "."))) {
				if isForbidden(m) {
					t.Errorf("builds a package of %s", m)
				}
			}
			// The whole module graph: no forbidden module at all, but the
			// ones Kubernetes' modules list themselves, and those never
			// required by a Ballast module.
			for _, m := range strings.Fields(string(goCmd(t, dir, "list", "-m", "-f", "{{.Path}}", "all"))) {
				if isForbidden(m) && !slices.ContainsFunc(upstreamGraph, func(u string) bool { return under(m, u) }) {
					t.Errorf("its module graph holds %s", m)
				}
			}
			graph := bufio.NewScanner(bytes.NewReader(goCmd(t, dir, "mod", "graph")))
			for graph.Scan() {
				from, to, _ := strings.Cut(graph.Text(), " ")
				to, _, _ = strings.Cut(to, "@")
				if strings.HasPrefix(from, ballast) && isForbidden(to) {
					t.Errorf("%s requires %s", from, to)
				}
			}
		})
	}
}
