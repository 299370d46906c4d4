package k3s

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chartutil"

	"github.com/ballast-sched/ballast/charts"
)

// FuzzValidateValues gives Install's validation arbitrary values, in both
// scheduler modes: the chart rendered with them, schema included, as
// helm-controller will render it. Nothing may panic. Values it accepts must
// make the HelmChart manifest Install writes, and that manifest must decode
// and carry exactly those values.
func FuzzValidateValues(f *testing.F) {
	files, err := charts.Files()
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		// The shipped defaults, and the value sets the chart's CI installs.
		if file.Name == "values.yaml" || strings.HasPrefix(file.Name, "ci/") {
			f.Add(file.Data, false)
		}
	}
	f.Add([]byte("{}"), true)
	f.Add([]byte("scheduler: {replicas: 2, leaderElection: {enabled: false}}\n"), false)
	f.Add([]byte("global: {bootstrapSchedulerName: default-scheduler}\n"), true)
	f.Add([]byte("loadWatcher: {windows: [0s]}\ndescheduler: {schedulerNames: []}\n"), false)
	archive, err := charts.Archive()
	if err != nil {
		f.Fatal(err)
	}

	f.Fuzz(func(t *testing.T, data []byte, replaceDefault bool) {
		user, err := chartutil.ReadValues(data)
		if err != nil {
			return // not a values file: `ballast install -f` refuses it
		}
		mode := ModeSecond
		if replaceDefault {
			mode = ModeReplaceDefault
		}
		vals := WithMode(user, mode)
		want, err := normalise(vals)
		if err != nil {
			return // values JSON cannot hold: Helm refuses them too
		}
		if _, _, err := charts.Render(context.Background(), charts.RenderOptions{ReleaseName: HelmChartName, Values: vals}); err != nil {
			return // invalid values: Install stops here, before writing anything
		}

		hc, err := NewHelmChart(archive, vals, charts.DefaultNamespace)
		if err != nil {
			t.Fatalf("values the chart accepts make no HelmChart: %v", err)
		}
		manifest, err := EncodeHelmChart(hc)
		if err != nil {
			t.Fatalf("values the chart accepts make no manifest: %v", err)
		}
		back, err := DecodeHelmChart(manifest)
		if err != nil {
			t.Fatalf("the manifest Install would write does not decode: %v", err)
		}
		written, err := chartutil.ReadValues([]byte(back.Spec.ValuesContent))
		if err != nil {
			t.Fatalf("the manifest's valuesContent is not a values file: %v", err)
		}
		got, err := normalise(written)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("values written differ from the values validated (-validated,+written):\n%s", diff)
		}
	})
}

// normalise returns values as JSON decodes them, the form Helm compares them in.
func normalise(vals map[string]any) (any, error) {
	data, err := json.Marshal(vals)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decode values: %w", err)
	}
	return out, nil
}
