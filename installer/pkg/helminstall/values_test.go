package helminstall

import (
	"io"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/ballast-sched/ballast/charts"
)

func TestReleaseValuesMergesTheReleaseWithItsChartsDefaults(t *testing.T) {
	chrt, err := charts.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg := &action.Configuration{Releases: storage.Init(driver.NewMemory()), KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard}}
	o := Options{ReleaseName: "ballast", Namespace: "ballast-system"}

	vals, from, found, err := releaseValues(cfg, o)
	if err != nil || found || from != "the chart's defaults" {
		t.Fatalf("without a release: from %q, found %t, err %v; want the chart's defaults", from, found, err)
	}
	if port, err := vals.PathValue("global.loadWatcher.port"); err != nil || port == nil {
		t.Errorf("chart defaults lack global.loadWatcher.port: %v, %v", port, err)
	}

	rel := &release.Release{Name: "ballast", Namespace: "ballast-system", Version: 3, Chart: chrt,
		Info:   &release.Info{Status: release.StatusDeployed},
		Config: map[string]any{"global": map[string]any{"loadWatcher": map[string]any{"port": 3030}}}}
	if err := cfg.Releases.Create(rel); err != nil {
		t.Fatal(err)
	}
	vals, from, found, err = releaseValues(cfg, o)
	if err != nil || !found || from != "release ballast-system/ballast revision 3" {
		t.Fatalf("with a release: from %q, found %t, err %v", from, found, err)
	}
	if port, _ := vals.PathValue("global.loadWatcher.port"); port != 3030 {
		t.Errorf("port = %v, want the release's 3030", port)
	}
	// Defaults the release did not set come from its chart.
	if s, _ := vals.PathValue("scheduler.loadWatcherStaleAfter"); s != "90s" {
		t.Errorf("scheduler.loadWatcherStaleAfter = %v, want the chart's 90s", s)
	}
}
