package helminstall

import (
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/ballast-sched/ballast/charts"
)

// configWith is a Helm configuration whose storage holds rel.
func configWith(t *testing.T, rel *release.Release) *action.Configuration {
	t.Helper()
	cfg := &action.Configuration{Releases: storage.Init(driver.NewMemory())}
	if err := cfg.Releases.Create(rel); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// A release of the name given that is another chart's is left by an
// uninstall, which says so; Ballast's is removed with its Leases.
func TestUninstallRemovesOnlyBallastsRelease(t *testing.T) {
	o := Options{ReleaseName: "ballast", Namespace: "ballast-system"}
	theirs := &release.Release{Name: "ballast", Namespace: "ballast-system", Version: 3,
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "ballast-ui"}}, Info: &release.Info{Status: release.StatusDeployed}}
	plan, err := planUninstall(configWith(t, theirs), o)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Found || plan.NotBallast == nil || plan.NotBallast.Chart != "ballast-ui" || len(plan.Leases) != 0 {
		t.Errorf("another chart's release: %+v", plan)
	}

	ours := &release.Release{Name: "ballast", Namespace: "ballast-system", Version: 2,
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: charts.ChartName}}, Info: &release.Info{Status: release.StatusDeployed},
		Manifest: "--leader-elect-resource-name=ballast-descheduler\n--leader-elect-resource-namespace=ballast-system\n"}
	plan, err = planUninstall(configWith(t, ours), o)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Found || plan.NotBallast != nil || plan.Revision != 2 || len(plan.Leases) != 1 {
		t.Errorf("Ballast's release: %+v", plan)
	}

	if plan, err = planUninstall(&action.Configuration{Releases: storage.Init(driver.NewMemory())}, o); err != nil || plan.Found {
		t.Errorf("no release: %+v, %v", plan, err)
	}
	var notBallast *NotBallastError
	if err := checkChart(theirs, "ballast-system"); !errors.As(err, &notBallast) {
		t.Errorf("checkChart of another chart's release: %v", err)
	}
}
