package values

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

func TestMergeFollowsHelmPrecedence(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base.yaml")
	override := filepath.Join(dir, "override.yaml")
	if err := os.WriteFile(base, []byte("scheduler:\n  replicas: 2\n  logLevel: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(override, []byte("scheduler:\n  logLevel: 4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var o Options
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.AddFlags(fs)
	// Later files win over earlier ones, --set wins over files, --set-string keeps strings.
	err := fs.Parse([]string{"-f", base, "-f", override, "--set", "scheduler.replicas=3", "--set-string", "global.image.tag=1.0"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := o.Merge()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"scheduler": map[string]any{"replicas": int64(3), "logLevel": float64(4)},
		"global":    map[string]any{"image": map[string]any{"tag": "1.0"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged values (-want,+got):\n%s", diff)
	}
}

func TestMergeReportsMissingFile(t *testing.T) {
	o := Options{}
	o.ValueFiles = []string{filepath.Join(t.TempDir(), "absent.yaml")}
	if _, err := o.Merge(); err == nil {
		t.Fatal("missing values file accepted")
	}
}
