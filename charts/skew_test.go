package charts

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// The chart refuses API servers outside the window Kubernetes's version skew
// policy gives Ballast's scheduler, built on the line of hack/k8s-version:
// that minor and the next. Every Chart.yaml says so.
func TestKubeVersionFollowsTheKubernetesLine(t *testing.T) {
	data, err := os.ReadFile("../hack/k8s-version")
	if err != nil {
		t.Fatal(err)
	}
	var major, minor, patch int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(data)), "v%d.%d.%d", &major, &minor, &patch); err != nil {
		t.Fatalf("parse hack/k8s-version %q: %v", data, err)
	}
	want := fmt.Sprintf(">=%d.%d.0-0 <%d.%d.0-0", major, minor, major, minor+2)
	c, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, ch := range append([]*chart.Chart{c}, c.Dependencies()...) {
		if ch.Metadata.KubeVersion != want {
			t.Errorf("chart %s: kubeVersion %q, want %q", ch.Name(), ch.Metadata.KubeVersion, want)
		}
	}
}

func TestWithoutKubeVersion(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	archive, err := ArchiveFiles(WithoutKubeVersion(files))
	if err != nil {
		t.Fatal(err)
	}
	c, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	charts := append([]*chart.Chart{c}, c.Dependencies()...)
	if len(charts) != 4 {
		t.Fatalf("archive holds %d charts, want the umbrella and three subcharts", len(charts))
	}
	for _, ch := range charts {
		if ch.Metadata.KubeVersion != "" {
			t.Errorf("chart %s still has kubeVersion %q", ch.Name(), ch.Metadata.KubeVersion)
		}
	}
	// The embedded files are untouched.
	again, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if again.Metadata.KubeVersion == "" {
		t.Error("WithoutKubeVersion changed the embedded chart")
	}
}
