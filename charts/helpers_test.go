package charts

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// exampleValueFiles returns the example values files shipped in the chart's ci/ directory.
func exampleValueFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(ChartName, "ci", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no example values files in ci/")
	}
	return files
}

func readValues(t *testing.T, file string) map[string]any {
	t.Helper()
	vals, err := chartutil.ReadValuesFile(file)
	if err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	return vals.AsMap()
}

// valuesFromYAML parses an inline values document.
func valuesFromYAML(t *testing.T, doc string) map[string]any {
	t.Helper()
	vals := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &vals); err != nil {
		t.Fatalf("parse values: %v", err)
	}
	return vals
}

// object is one rendered manifest: typed when client-go knows the kind.
type object struct {
	raw   map[string]any
	typed runtime.Object
	kind  string
	name  string
	ns    string
}

func render(t *testing.T, vals map[string]any) []object {
	t.Helper()
	manifest, _, err := Render(context.Background(), RenderOptions{Values: vals})
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return splitManifest(t, manifest)
}

func splitManifest(t *testing.T, manifest string) []object {
	t.Helper()
	var objs []object
	for _, doc := range strings.Split(manifest, "\n---") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		raw := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &raw); err != nil {
			t.Fatalf("rendered document is not YAML: %v\n%s", err, doc)
		}
		if len(raw) == 0 {
			continue
		}
		u := unstructured.Unstructured{Object: raw}
		o := object{raw: raw, kind: u.GetKind(), name: u.GetName(), ns: u.GetNamespace()}
		if typed, _, err := scheme.Codecs.UniversalDeserializer().Decode([]byte(doc), nil, nil); err == nil {
			o.typed = typed
		}
		objs = append(objs, o)
	}
	return objs
}

func find(objs []object, kind, name string) (object, bool) {
	for _, o := range objs {
		if o.kind == kind && o.name == name {
			return o, true
		}
	}
	return object{}, false
}

func mustFind(t *testing.T, objs []object, kind, name string) object {
	t.Helper()
	o, ok := find(objs, kind, name)
	if !ok {
		t.Fatalf("no %s %s rendered; have %v", kind, name, kindNames(objs))
	}
	return o
}

func kindNames(objs []object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.kind+"/"+o.name)
	}
	return out
}

func TestMain(m *testing.M) {
	// Tests read the chart from disk too (lint needs a directory); make sure it is the embedded one.
	if _, err := os.Stat(filepath.Join(ChartName, "Chart.yaml")); err != nil {
		panic("run the chart tests from the charts module directory: " + err.Error())
	}
	os.Exit(m.Run())
}
