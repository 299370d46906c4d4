package integration

import (
	"io/fs"
	"path"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
)

// TestEveryRenderedObjectPassesServerSideDryRun sends every object the chart
// renders, with its defaults and every example values file, to a real API
// server as a dry-run create: validation, defaulting and admission all run.
func TestEveryRenderedObjectPassesServerSideDryRun(t *testing.T) {
	c, ctx := startCluster(t)
	dyn, err := dynamic.NewForConfig(c.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	for _, ns := range []string{charts.DefaultNamespace, "monitoring"} {
		createNamespace(t, ctx, c.Client, ns)
	}

	files, err := fs.Glob(charts.FS(), "ci/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values files: %v", err)
	}
	cases := map[string]map[string]any{"defaults": {}}
	for _, f := range files {
		data, err := fs.ReadFile(charts.FS(), f)
		if err != nil {
			t.Fatal(err)
		}
		vals, err := chartutil.ReadValues(data)
		if err != nil {
			t.Fatal(err)
		}
		cases[path.Base(f)] = vals.AsMap()
	}
	for name, vals := range cases {
		t.Run(name, func(t *testing.T) {
			manifest, _, err := charts.Render(ctx, charts.RenderOptions{Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			var checked int
			for _, u := range decodeAll(t, manifest) {
				gvk := u.GroupVersionKind()
				mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
				if meta.IsNoMatchError(err) && gvk.Group == "monitoring.coreos.com" {
					// The Prometheus Operator's CRDs are not part of a bare API server.
					continue
				}
				if err != nil {
					t.Errorf("%s %s: %v", gvk.Kind, u.GetName(), err)
					continue
				}
				var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
				if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
					ri = dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
				}
				if _, err := ri.Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
					t.Errorf("%s %s/%s rejected: %v", gvk.Kind, u.GetNamespace(), u.GetName(), err)
				}
				checked++
			}
			if checked < 10 {
				t.Errorf("only %d objects checked", checked)
			}
		})
	}
}

func decodeAll(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(manifest, "\n---") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("decode rendered document: %v", err)
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out
}
