package values

import (
	"os"
	"path/filepath"
	"strings"
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

func TestRegistrySetsTheImageRegistry(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		want    any    // global.image.registry
		wantErr string // part of the error, when refused
	}{
		{name: "registry", args: []string{"--registry", "registry.lan:5000/ballast/"}, want: "registry.lan:5000/ballast"},
		{name: "same in values", args: []string{"--registry", "10.0.0.2:5000", "--set", "global.image.registry=10.0.0.2:5000"}, want: "10.0.0.2:5000"},
		{name: "kept beside other image values", args: []string{"--registry", "r.lan/b", "--set-string", "global.image.tag=1.2.3"}, want: "r.lan/b"},
		{name: "values disagree", args: []string{"--registry", "r.lan/b", "--set", "global.image.registry=ghcr.io/x"}, wantErr: "disagree"},
		{name: "scheme", args: []string{"--registry", "http://r.lan:5000/b"}, wantErr: "without a scheme"},
		{name: "tag", args: []string{"--registry", "r.lan/ballast:1.0"}, wantErr: "global.image.tag"},
		{name: "space", args: []string{"--registry", "r.lan/my images"}, wantErr: "want host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.AddFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			got, err := o.Merge()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--registry") {
					t.Fatalf("Merge() error = %v, want one naming --registry and saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			image, _ := got["global"].(map[string]any)["image"].(map[string]any)
			if image["registry"] != tc.want {
				t.Errorf("global.image.registry = %v, want %v (values %v)", image["registry"], tc.want, got)
			}
			if tc.name == "kept beside other image values" && image["tag"] != "1.2.3" {
				t.Errorf("global.image.tag = %v, lost beside --registry", image["tag"])
			}
		})
	}
}
