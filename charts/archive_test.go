package charts

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart/loader"
)

func TestArchiveIsReproducibleAndLoadsAsTheSameChart(t *testing.T) {
	first, err := Archive()
	if err != nil {
		t.Fatal(err)
	}
	second, err := Archive()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Fatal("two archives of the same chart differ; HelmChart content would churn on every install")
	}

	fromArchive, err := loader.LoadArchive(bytes.NewReader(first))
	if err != nil {
		t.Fatalf("load archive: %v", err)
	}
	embedded, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(embedded.Metadata, fromArchive.Metadata); diff != "" {
		t.Errorf("metadata (-embedded,+archive):\n%s", diff)
	}
	if got, want := len(fromArchive.Dependencies()), 3; got != want {
		t.Errorf("archive has %d subcharts, want %d", got, want)
	}
	// _helpers.tpl must survive: without it no template renders.
	var helpers bool
	for _, tpl := range fromArchive.Templates {
		if tpl.Name == "templates/_helpers.tpl" {
			helpers = true
		}
	}
	if !helpers {
		t.Error("templates/_helpers.tpl missing from the archive")
	}
	if diff := cmp.Diff(embedded.Values, fromArchive.Values); diff != "" {
		t.Errorf("values (-embedded,+archive):\n%s", diff)
	}
	if !bytes.Equal(embedded.Schema, fromArchive.Schema) {
		t.Error("values.schema.json differs between the embedded chart and the archive")
	}
}

// The chart is embedded with `all:` (so templates/_helpers.tpl is kept), which
// also embeds hidden files left in charts/ballast (editor swap files,
// .DS_Store, an .env) into every binary and the chart archive. Go's embed
// never takes a .git directory; this catches the rest.
func TestEmbeddedChartHasNoHiddenFiles(t *testing.T) {
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		for _, elem := range strings.Split(f.Name, "/") {
			if strings.HasPrefix(elem, ".") {
				t.Errorf("the embedded chart holds %s: remove it from charts/%s", f.Name, ChartName)
				break
			}
		}
	}
}
