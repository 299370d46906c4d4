package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// workspace lays out a go.work with a module for each top-level directory of
// files (path relative to the repository → Go source), requiring and
// replacing the Ballast modules its packages import unless reqs says
// otherwise (directory → the Ballast modules its go.mod requires).
func workspace(t *testing.T, files map[string]string, reqs map[string][]string) string {
	t.Helper()
	root := t.TempDir()
	dirs := map[string]bool{}
	for name := range files {
		dirs[strings.SplitN(name, "/", 2)[0]] = true
	}
	work := "go 1.26.0\n\nuse (\n"
	var sorted []string
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	for _, d := range sorted {
		work += "\t./" + d + "\n"
		mod := "module " + prefix + "/" + d + "\n\ngo 1.26.0\n"
		for _, r := range reqs[d] {
			mod += "\nrequire " + prefix + "/" + r + " v0.0.0-00010101000000-000000000000\n"
			mod += "replace " + prefix + "/" + r + " => ../" + r + "\n"
		}
		files[d+"/go.mod"] = mod
	}
	files["go.work"] = work + ")\n"
	for name, src := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func importing(pkg string, imports ...string) string {
	src := "package " + pkg + "\n\n"
	for _, imp := range imports {
		src += "import _ \"" + prefix + "/" + imp + "\"\n"
	}
	return src
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name         string
		files        map[string]string
		reqs         map[string][]string
		want         []violation
		wantHomeless []string
		wantProblems []string
	}{
		{
			name: "every import and requirement downward",
			files: map[string]string{
				"core/usage/usage.go":            importing("usage"),
				"scheduler/plugin/plugin.go":     importing("plugin", "core/usage"),
				"simulator/sim/stack/stack.go":   importing("stack", "scheduler/plugin", "simulator/sim/model"),
				"simulator/sim/model/model.go":   importing("model", "core/usage"),
				"simulator/sim/engine.go":        importing("sim", "simulator/sim/stack"),
				"simulator/cmd/tool/main.go":     importing("main", "simulator/sim"),
				"core/usage/usage_ext_test.go":   importing("usage_test", "core/usage"),
				"load-watcher/pkg/server/srv.go": importing("server", "core/usage"),
			},
			reqs: map[string][]string{
				"scheduler":    {"core"},
				"simulator":    {"core", "scheduler"},
				"load-watcher": {"core"},
			},
		},
		{
			// What the repository once had: the ground floor's test ran the
			// load-watcher server.
			name: "a ground-floor test imports a component",
			files: map[string]string{
				"core/client/client.go":          importing("client"),
				"core/client/client_test.go":     importing("client", "load-watcher/pkg/server"),
				"load-watcher/pkg/server/srv.go": importing("server", "core/client"),
			},
			reqs: map[string][]string{"core": {"load-watcher"}, "load-watcher": {"core"}},
			want: []violation{
				{from: "core/client", to: "load-watcher/pkg/server", test: true},
				{from: "core", to: "load-watcher", module: true},
			},
		},
		{
			name: "an external test package counts too",
			files: map[string]string{
				"load-watcher/pkg/server/srv.go":      importing("server"),
				"load-watcher/pkg/server/srv_test.go": importing("server_test", "simulator/x"),
				"simulator/x/x.go":                    importing("x"),
			},
			reqs: map[string][]string{"load-watcher": {"simulator"}},
			want: []violation{
				{from: "load-watcher/pkg/server", to: "simulator/x", test: true},
				{from: "load-watcher", to: "simulator", module: true},
			},
		},
		{
			name: "components do not import each other sideways",
			files: map[string]string{
				"descheduler/plugin/plugin.go": importing("plugin", "scheduler/plugin"),
				"scheduler/plugin/plugin.go":   importing("plugin"),
			},
			reqs: map[string][]string{"descheduler": {"scheduler"}},
			want: []violation{
				{from: "descheduler/plugin", to: "scheduler/plugin"},
				{from: "descheduler", to: "scheduler", module: true},
			},
		},
		{
			name: "a component does not require the in-process cluster",
			files: map[string]string{
				"cluster/cluster.go":                importing("cluster"),
				"scheduler/plugin/plugin.go":        importing("plugin"),
				"scheduler/plugin/plugin_test.go":   importing("plugin", "cluster"),
				"simulator/sim/model/model.go":      importing("model", "cluster"),
				"simulator/sim/model/model_test.go": importing("model"),
			},
			reqs: map[string][]string{"scheduler": {"cluster"}, "simulator": {"cluster"}},
			want: []violation{
				{from: "scheduler", to: "cluster", module: true},
				{from: "scheduler/plugin", to: "cluster", test: true},
			},
		},
		{
			name: "a lower part of a floor does not import the rest of it",
			files: map[string]string{
				"simulator/sim/model/model.go": importing("model", "simulator/sim"),
				"simulator/sim/engine.go":      importing("sim"),
			},
			want: []violation{{from: "simulator/sim/model", to: "simulator/sim"}},
		},
		{
			name: "a package in a directory no floor names",
			files: map[string]string{
				"core/x.go":            importing("core"),
				"core/attic/thing.go":  importing("attic"),
				"attic/thing/thing.go": importing("thing"),
			},
			wantHomeless: []string{"attic/thing"},
			wantProblems: []string{"module attic: no floor names it as a module (add it to hack/verify-layers/layers.go and docs/architecture.md)"},
		},
		{
			name: "a module builds with a Ballast module it does not replace",
			files: map[string]string{
				"core/usage/usage.go":            importing("usage"),
				"load-watcher/pkg/server/srv.go": importing("server", "core/usage"),
				"scheduler/plugin/plugin.go":     importing("plugin", "load-watcher/pkg/server"),
			},
			// scheduler requires load-watcher, which requires core: core
			// is in scheduler's build too.
			reqs:         map[string][]string{"load-watcher": {"core"}, "scheduler": {"load-watcher"}},
			wantProblems: []string{"module scheduler: builds with core but does not replace it with ../core (it would not build alone)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := check(workspace(t, tc.files, tc.reqs))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got.violations, cmp.AllowUnexported(violation{})); diff != "" {
				t.Errorf("violations (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHomeless, got.homeless); diff != "" {
				t.Errorf("packages without a floor (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantProblems, got.problems); diff != "" {
				t.Errorf("module problems (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestVersions holds every dependency that two modules list to one version.
func TestVersions(t *testing.T) {
	root := workspace(t, map[string]string{
		"core/x.go":      importing("core"),
		"scheduler/x.go": importing("scheduler"),
	}, nil)
	for dir, v := range map[string]string{"core": "v0.6.0", "scheduler": "v0.7.0"} {
		p := filepath.Join(root, dir, "go.mod")
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, []byte("\nrequire github.com/google/go-cmp "+v+"\n")...)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := check(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"github.com/google/go-cmp is listed at 2 versions: v0.6.0 in core; v0.7.0 in scheduler (go work sync)"}
	if diff := cmp.Diff(want, got.problems); diff != "" {
		t.Errorf("module problems (-want,+got):\n%s", diff)
	}
}

// TestRepository holds this repository to its floors, so `make test-all`
// fails on an upward import or requirement as `make lint` does.
func TestRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every package of every module")
	}
	got, err := check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got.violations {
		t.Errorf("upward: %s", v)
	}
	for _, p := range got.homeless {
		t.Errorf("no floor: %s", p)
	}
	for _, p := range got.problems {
		t.Errorf("modules: %s", p)
	}
}
