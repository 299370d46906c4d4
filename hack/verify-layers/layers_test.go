package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeModule lays out a module with Ballast's path and the given files
// (path relative to the module → Go source).
func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	files["go.mod"] = "module " + module + "\n\ngo 1.26\n"
	for name, src := range files {
		path := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func importing(pkg string, imports ...string) string {
	src := "package " + pkg + "\n\n"
	for _, imp := range imports {
		src += "import _ \"" + module + "/" + imp + "\"\n"
	}
	return src
}

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name         string
		files        map[string]string
		want         []violation
		wantHomeless []string
	}{
		{
			name: "every import downward",
			files: map[string]string{
				"core/usage/usage.go":            importing("usage"),
				"scheduler/plugin/plugin.go":     importing("plugin", "core/usage"),
				"simulator/sim/stack/stack.go":   importing("stack", "scheduler/plugin", "simulator/sim/model"),
				"simulator/sim/model/model.go":   importing("model", "core/usage"),
				"simulator/sim/engine.go":        importing("sim", "simulator/sim/stack"),
				"simulator/cmd/tool/main.go":     importing("main", "simulator/sim"),
				"installer/pkg/x/x_test.go":      importing("x", "scheduler/plugin"),
				"e2e/journey_test.go":            importing("e2e", "simulator/sim", "installer/pkg/x"),
				"core/usage/usage_ext_test.go":   importing("usage_test", "core/usage"),
				"load-watcher/pkg/server/srv.go": importing("server", "core/usage"),
			},
		},
		{
			// What the module once had: the ground floor's test ran the
			// load-watcher server.
			name: "a ground-floor test imports a component",
			files: map[string]string{
				"core/client/client.go":          importing("client"),
				"core/client/client_test.go":     importing("client", "load-watcher/pkg/server"),
				"load-watcher/pkg/server/srv.go": importing("server", "core/client"),
			},
			want: []violation{{from: "core/client", to: "load-watcher/pkg/server", test: true}},
		},
		{
			name: "an external test package counts too",
			files: map[string]string{
				"load-watcher/pkg/server/srv.go":      importing("server"),
				"load-watcher/pkg/server/srv_test.go": importing("server_test", "simulator/x"),
				"simulator/x/x.go":                    importing("x"),
			},
			want: []violation{{from: "load-watcher/pkg/server", to: "simulator/x", test: true}},
		},
		{
			name: "components do not import each other sideways",
			files: map[string]string{
				"descheduler/plugin/plugin.go": importing("plugin", "scheduler/plugin"),
				"scheduler/plugin/plugin.go":   importing("plugin"),
			},
			want: []violation{{from: "descheduler/plugin", to: "scheduler/plugin"}},
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
				"attic/thing/thing.go": importing("thing"),
			},
			wantHomeless: []string{"attic/thing"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, homeless, err := check(writeModule(t, tc.files))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(violation{})); diff != "" {
				t.Errorf("violations (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantHomeless, homeless); diff != "" {
				t.Errorf("packages without a floor (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestRepository holds this repository to its floors, so `go test ./...`
// fails on an upward import as `make lint` does.
func TestRepository(t *testing.T) {
	if testing.Short() {
		t.Skip("lists every package of the module")
	}
	got, homeless, err := check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range got {
		t.Errorf("upward import: %s", v)
	}
	for _, p := range homeless {
		t.Errorf("no floor: %s", p)
	}
}
