package helminstall

import (
	"errors"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/ballast-sched/ballast/charts"
)

// ReleaseValues reads the values the release o.ReleaseName in o.Namespace
// was installed with, merged with the defaults of the chart it was
// installed from, through Helm's storage (the release Secrets Helm and
// k3s's helm-controller both write). Without a release it returns the
// embedded chart's defaults and found false. from names the source, for
// messages.
func ReleaseValues(o Options) (vals chartutil.Values, from string, found bool, err error) {
	cfg, err := o.configuration()
	if err != nil {
		return nil, "", false, err
	}
	return releaseValues(cfg, o)
}

func releaseValues(cfg *action.Configuration, o Options) (vals chartutil.Values, from string, found bool, err error) {
	rel, err := action.NewGet(cfg).Run(o.ReleaseName)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, "", false, fmt.Errorf("read release %s/%s: %w", o.Namespace, o.ReleaseName, err)
	}
	if err == nil && rel.Chart != nil {
		from = fmt.Sprintf("release %s/%s revision %d", o.Namespace, o.ReleaseName, rel.Version)
		if vals, err = chartutil.CoalesceValues(rel.Chart, rel.Config); err != nil {
			return nil, "", false, fmt.Errorf("values of %s: %w", from, err)
		}
		return vals, from, true, nil
	}
	chrt, err := charts.Load()
	if err != nil {
		return nil, "", false, err
	}
	from = "the chart's defaults"
	if vals, err = chartutil.CoalesceValues(chrt, nil); err != nil {
		return nil, "", false, fmt.Errorf("values of %s: %w", from, err)
	}
	return vals, from, false, nil
}
