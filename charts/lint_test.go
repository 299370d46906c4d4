package charts

import (
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestLint runs `helm lint --strict` over the chart with its defaults and with every example values file.
func TestLint(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(DefaultKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]map[string]any{"defaults": {}}
	for _, f := range exampleValueFiles(t) {
		cases[filepath.Base(f)] = readValues(t, f)
	}
	for name, vals := range cases {
		t.Run(name, func(t *testing.T) {
			linter := lint.AllWithKubeVersion(ChartName, vals, DefaultNamespace, kv)
			for _, msg := range linter.Messages {
				// INFO is advice (an icon); warnings and errors fail like `helm lint --strict`.
				if msg.Severity > support.InfoSev {
					t.Errorf("%s", msg)
				}
			}
		})
	}
}

// TestLintReportsBrokenValues proves the lint above can fail: values the chart refuses must produce errors.
func TestLintReportsBrokenValues(t *testing.T) {
	kv, err := chartutil.ParseKubeVersion(DefaultKubeVersion)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{"scheduler": map[string]any{"plugins": map[string]any{"loadAware": map[string]any{"thresholds": map[string]any{"cpu": 150}}}}}
	linter := lint.AllWithKubeVersion(ChartName, vals, DefaultNamespace, kv)
	if linter.HighestSeverity < support.ErrorSev {
		t.Errorf("lint accepted a cpu threshold of 150: %v", linter.Messages)
	}
}
