package helmjob

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/klog/v2"
)

// ConfigHashLabel is the label helm-controller reads on the release to know
// which HelmChart configuration it carries.
const ConfigHashLabel = "helmcharts.helm.cattle.io/configHash"

// Job is one run of the program: helm-controller's environment, arguments
// and volumes, and where Helm keeps its files.
type Job struct {
	Env    Env
	Action Action
	Paths  Paths
	// Settings locate Helm's cache and configuration (under Paths.Home in
	// the image) for charts fetched from a repository.
	Settings *cli.EnvSettings
}

// ExitError ends the program with Code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Run installs, upgrades or uninstalls the release with cfg, as
// klipper-helm's entrypoint does, and returns what it did in one line.
//
// With "delete" it uninstalls the release, if any. Otherwise it installs a
// release that does not exist; upgrades a deployed one; marks a release that
// an interrupted run left pending as failed (and upgrades it if it was an
// upgrade); and treats a failed one as FAILURE_POLICY says. Either way it does
// nothing when the release's revision is not the one helm-controller
// expected (another Job got there first).
func (j Job) Run(ctx context.Context, cfg *action.Configuration) (string, error) {
	logger := klog.FromContext(ctx).WithValues("release", j.namespace()+"/"+j.Env.Name)
	if j.Env.HelmVersion == "v2" {
		return "", &ExitError{Code: 64, Err: errors.New("the HelmChart asks for Helm v2, which is no longer supported: use a Helm 3 chart")}
	}
	if j.Env.ServerSide == "true" {
		return "", errors.New("SERVER_SIDE=true: this image applies manifests with Helm 3, which has client-side apply only")
	}
	rel, err := action.NewStatus(cfg).Run(j.Env.Name)
	found := err == nil
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return "", fmt.Errorf("read the status of release %s: %w", j.Env.Name, err)
	}
	if found {
		logger = logger.WithValues("revision", rel.Version, "status", rel.Info.Status)
	}
	ctx = klog.NewContext(ctx, logger)

	if j.Action.Delete {
		if !found {
			logger.Info("No chart installed; nothing to delete")
			return "No chart installed; nothing to delete", nil
		}
		if msg, moved := j.revisionMoved(rel); moved {
			logger.Info(msg)
			return msg, nil
		}
		logger.Info("Uninstalling chart")
		un := action.NewUninstall(cfg)
		un.Wait, un.Timeout = true, j.timeout()
		if _, err := un.Run(j.Env.Name); err != nil {
			// klipper-helm ignores a failed uninstall too: helm-controller
			// removes the HelmChart's own objects either way.
			logger.Error(err, "Uninstall failed; going on")
		}
		return "Uninstalled chart", nil
	}

	chrt, err := j.loadChart(ctx)
	if err != nil {
		return "", err
	}
	vals, err := j.values()
	if err != nil {
		return "", err
	}
	if !found {
		return j.install(ctx, cfg, chrt, vals)
	}
	if msg, moved := j.revisionMoved(rel); moved {
		logger.Info(msg)
		return msg, nil
	}
	status := rel.Info.Status
	switch status {
	case release.StatusPendingInstall, release.StatusPendingUpgrade, release.StatusPendingRollback,
		release.StatusSuperseded, release.StatusUninstalling:
		logger.Info("Previous job was interrupted; marking the release failed")
		rel.SetStatus(release.StatusFailed, "marked failed: the helm job that left it "+status.String()+" was interrupted")
		if err := cfg.Releases.Update(rel); err != nil {
			return "", fmt.Errorf("mark release %s failed: %w", j.Env.Name, err)
		}
		// A superseded or pending upgrade may have left the right objects:
		// an upgrade first; if it fails too, the next try sees it failed.
		if status == release.StatusPendingUpgrade || status == release.StatusSuperseded {
			return j.upgrade(ctx, cfg, chrt, vals)
		}
		status = release.StatusFailed
	}
	switch status {
	case release.StatusDeployed:
		return j.upgrade(ctx, cfg, chrt, vals)
	case release.StatusUninstalled, release.StatusFailed, release.StatusUnknown:
		switch j.Env.FailurePolicy {
		case PolicyAbort:
			return "", fmt.Errorf("release status is %q and failure policy is %q; waiting for operator intervention", status, PolicyAbort)
		case PolicyReinstall:
			logger.Info("Uninstalling the release before installing it again", "failurePolicy", PolicyReinstall)
			un := action.NewUninstall(cfg)
			un.Wait, un.Timeout = true, j.timeout()
			if _, err := un.Run(j.Env.Name); err != nil {
				// As in klipper-helm: the install that follows says whether
				// the name is still taken.
				logger.Error(err, "Uninstall failed; installing anyway")
			}
			return j.install(ctx, cfg, chrt, vals)
		case PolicyRetry:
			return j.upgrade(ctx, cfg, chrt, vals)
		default:
			return "", fmt.Errorf("unknown failure policy %q", j.Env.FailurePolicy)
		}
	}
	return j.install(ctx, cfg, chrt, vals)
}

// revisionMoved reports whether the release is at another revision than the
// one helm-controller made the Job for.
func (j Job) revisionMoved(rel *release.Release) (string, bool) {
	if j.Env.ExpectedRevision == "" || j.Env.ExpectedRevision == strconv.Itoa(rel.Version) {
		return "", false
	}
	return fmt.Sprintf("Current release revision %d does not match expected revision %s; nothing done", rel.Version, j.Env.ExpectedRevision), true
}

func (j Job) install(ctx context.Context, cfg *action.Configuration, chrt *chart.Chart, vals map[string]any) (string, error) {
	klog.FromContext(ctx).Info("Installing chart", "chart", chrt.Metadata.Name, "version", chrt.Metadata.Version)
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = j.Env.Name, j.namespace()
	in.CreateNamespace, in.TakeOwnership = j.Action.CreateNamespace, j.Action.TakeOwnership
	in.Timeout, in.Labels = j.timeout(), j.labels()
	rel, err := in.RunWithContext(ctx, chrt, vals)
	if err != nil {
		return "", fmt.Errorf("install release %s: %w", j.Env.Name, err)
	}
	return fmt.Sprintf("Installed chart %s %s as revision %d", chrt.Metadata.Name, chrt.Metadata.Version, rel.Version), nil
}

func (j Job) upgrade(ctx context.Context, cfg *action.Configuration, chrt *chart.Chart, vals map[string]any) (string, error) {
	klog.FromContext(ctx).Info("Upgrading chart", "chart", chrt.Metadata.Name, "version", chrt.Metadata.Version)
	up := action.NewUpgrade(cfg)
	up.Namespace, up.TakeOwnership = j.namespace(), j.Action.TakeOwnership
	up.Timeout, up.Labels = j.timeout(), j.labels()
	rel, err := up.RunWithContext(ctx, j.Env.Name, chrt, vals)
	if err != nil {
		return "", fmt.Errorf("upgrade release %s: %w", j.Env.Name, err)
	}
	return fmt.Sprintf("Upgraded chart %s %s to revision %d", chrt.Metadata.Name, chrt.Metadata.Version, rel.Version), nil
}

// namespace is the release's: --namespace when given, which helm-controller
// sets from spec.targetNamespace, else TARGET_NAMESPACE (the HelmChart's own,
// where the pod runs).
func (j Job) namespace() string {
	if j.Action.Namespace != "" {
		return j.Action.Namespace
	}
	return j.Env.TargetNamespace
}

// timeout is TIMEOUT, else Helm's default.
func (j Job) timeout() time.Duration {
	if j.Env.Timeout > 0 {
		return j.Env.Timeout
	}
	return 300 * time.Second
}

func (j Job) labels() map[string]string {
	if j.Env.ConfigHash == "" {
		return nil
	}
	return map[string]string{ConfigHashLabel: j.Env.ConfigHash}
}
