package helminstall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/ballast-sched/ballast/charts/values"
)

// PreviousValues returns the values the release was last installed or
// upgraded with (what the user gave, not the chart's defaults); found is
// false when there is no release.
func PreviousValues(o Options) (vals map[string]any, found bool, err error) {
	cfg, err := o.configuration()
	if err != nil {
		return nil, false, err
	}
	if last, err := cfg.Releases.Last(o.ReleaseName); err == nil {
		if err := checkChart(last, o.Namespace); err != nil {
			return nil, false, fmt.Errorf("%w: installing would replace it; give Ballast another --release-name", err)
		}
	}
	vals, err = action.NewGetValues(cfg).Run(o.ReleaseName)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read the values of release %s: %w", o.ReleaseName, err)
	}
	if vals == nil {
		vals = map[string]any{}
	}
	return vals, true, nil
}

// WaitForRelease waits until the newest revision of the release is deployed
// with (at least) the values want, as installed by someone else: k3s's
// helm-controller runs the install in a Job. It reports progress through
// o.Progress and gives up after o.Timeout.
func WaitForRelease(ctx context.Context, o Options, want map[string]any) error {
	cfg, err := o.configuration()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		state, done, err := releaseState(cfg, o.ReleaseName, want)
		if err != nil {
			return err
		}
		if done {
			return nil
		}
		if o.Progress != nil {
			o.Progress(state)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("release %s/%s not deployed within %s (last seen: %s)", o.Namespace, o.ReleaseName, o.Timeout, state)
		case <-tick.C:
		}
	}
}

// releaseState describes the newest revision of the release; done is true
// once it is deployed with the wanted values. A failed release is an error.
func releaseState(cfg *action.Configuration, name string, want map[string]any) (state string, done bool, err error) {
	rel, err := action.NewGet(cfg).Run(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return "no release yet", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read release %s: %w", name, err)
	}
	status := release.StatusUnknown
	if rel.Info != nil {
		status = rel.Info.Status
	}
	switch {
	case status == release.StatusFailed:
		desc := ""
		if rel.Info != nil {
			desc = rel.Info.Description
		}
		return "", false, fmt.Errorf("release %s revision %d failed: %s", name, rel.Version, desc)
	case status != release.StatusDeployed:
		return fmt.Sprintf("revision %d is %s", rel.Version, status), false, nil
	case !contains(rel.Config, want):
		return fmt.Sprintf("revision %d is deployed with other values (an earlier install)", rel.Version), false, nil
	}
	return fmt.Sprintf("revision %d deployed", rel.Version), true, nil
}

// contains reports whether every value in want is set to the same in got.
func contains(got, want map[string]any) bool {
	return len(values.Diff(got, values.Overlay(got, want))) == 0
}
