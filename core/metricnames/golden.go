package metricnames

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// update is the -update flag of the tests that keep a list.
var update = flag.Bool("update", false, "rewrite the metric lists in "+Dir)

// Check compares the list of component with names, or with -update
// rewrites it.
func Check(t testing.TB, component string, names []string) {
	t.Helper()
	path, err := Path(component)
	if err != nil {
		t.Fatal(err)
	}
	regenerate := "go test -run " + t.Name() + " -update"
	if root, err := Root(); err == nil {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(root, wd); err == nil {
				regenerate = "go test ./" + filepath.ToSlash(rel) + " -run " + t.Name() + " -update"
			}
		}
	}
	want := Format(component, regenerate, names)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (%s writes it)", err, regenerate)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s is not what the code registers; run %s (-code,+file):\n%s", path, regenerate, diff)
	}
}
