// Package helminstall installs, upgrades and removes the embedded Ballast
// chart through the Helm SDK, for clusters that are not k3s (or with --helm).
package helminstall

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/ballast-sched/ballast/charts"
)

// Options describe one install or upgrade.
type Options struct {
	Getter      genericclioptions.RESTClientGetter
	Client      kubernetes.Interface
	ReleaseName string
	Namespace   string
	Values      map[string]any
	// Chart to install; nil means the chart embedded in the binary.
	Chart *chart.Chart
	// Timeout bounds the whole operation, including waiting for the rollout.
	Timeout time.Duration
	// Progress receives readiness updates while waiting; may be nil.
	Progress func(string)
	// Debugf receives Helm's own log lines; may be nil.
	Debugf func(format string, args ...any)
}

func (o Options) configuration() (*action.Configuration, error) {
	cfg := &action.Configuration{}
	debugf := o.Debugf
	if debugf == nil {
		debugf = func(string, ...any) {}
	}
	if err := cfg.Init(o.Getter, o.Namespace, "secret", debugf); err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	return cfg, nil
}

// InstallOrUpgrade installs the release, or upgrades it when it exists, and
// waits until every Deployment is rolled out or the timeout passes.
func InstallOrUpgrade(ctx context.Context, o Options) (rel *release.Release, upgraded bool, err error) {
	cfg, err := o.configuration()
	if err != nil {
		return nil, false, err
	}
	chrt := o.Chart
	if chrt == nil {
		if chrt, err = charts.Load(); err != nil {
			return nil, false, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	unlock, err := o.lock(ctx)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	interrupted, err := recoverInterrupted(cfg, o.ReleaseName)
	if err != nil {
		return nil, false, err
	}
	if interrupted != nil && o.Progress != nil {
		o.Progress(fmt.Sprintf("revision %d of release %s was left %s by an interrupted command; marked failed, going on from there",
			interrupted.Version, o.ReleaseName, "pending"))
	}
	stopProgress := o.watchProgress(ctx)
	defer stopProgress()

	if last, err := cfg.Releases.Last(o.ReleaseName); err == nil {
		if err := checkChart(last, o.Namespace); err != nil {
			return nil, false, fmt.Errorf("%w: an upgrade would replace it; give Ballast another --release-name", err)
		}
	}
	_, histErr := action.NewHistory(cfg).Run(o.ReleaseName)
	switch {
	case errors.Is(histErr, driver.ErrReleaseNotFound):
		in := action.NewInstall(cfg)
		in.ReleaseName, in.Namespace = o.ReleaseName, o.Namespace
		in.CreateNamespace = true
		in.Wait, in.Timeout = true, o.Timeout
		rel, err = in.RunWithContext(ctx, chrt, o.Values)
	case histErr != nil:
		return nil, false, fmt.Errorf("look up release %s: %w", o.ReleaseName, histErr)
	default:
		up := action.NewUpgrade(cfg)
		up.Namespace = o.Namespace
		up.Wait, up.Timeout = true, o.Timeout
		up.ResetValues = true // the values given now are the whole truth, like a fresh install
		rel, err = up.RunWithContext(ctx, o.ReleaseName, chrt, o.Values)
		upgraded = true
	}
	if err != nil {
		if ctx.Err() != nil || strings.Contains(err.Error(), "context deadline exceeded") || strings.Contains(err.Error(), "timed out") {
			return rel, upgraded, fmt.Errorf("Ballast was not ready within %s (%s); inspect with: kubectl -n %s get pods,events: %w",
				o.Timeout, o.notReady(context.Background()), o.Namespace, err)
		}
		return rel, upgraded, err
	}
	return rel, upgraded, nil
}

// NotBallastError is a release of the name given that is not of Ballast's
// chart: an install does not upgrade it, an uninstall leaves it.
type NotBallastError struct {
	Release, Namespace, Chart string
}

func (e *NotBallastError) Error() string {
	return fmt.Sprintf("release %s in namespace %s is of chart %q, not Ballast's (%s)", e.Release, e.Namespace, e.Chart, charts.ChartName)
}

// checkChart refuses a release that is not of Ballast's chart.
func checkChart(rel *release.Release, namespace string) error {
	name := ""
	if rel.Chart != nil && rel.Chart.Metadata != nil {
		name = rel.Chart.Metadata.Name
	}
	if name != charts.ChartName {
		return &NotBallastError{Release: rel.Name, Namespace: namespace, Chart: name}
	}
	return nil
}

// UninstallPlan is what Uninstall removes: the release (when it is
// Ballast's) and the leader-election Leases its components take.
type UninstallPlan struct {
	// Found is false when there is no release of that name.
	Found bool
	// NotBallast is set when the release is of another chart: it is left.
	NotBallast *NotBallastError
	// Revision is the release's last revision.
	Revision int
	// Leases are the components' leader-election Leases.
	Leases []types.NamespacedName
}

// PlanUninstall reads what Uninstall would remove, changing nothing.
func PlanUninstall(o Options) (UninstallPlan, error) {
	cfg, err := o.configuration()
	if err != nil {
		return UninstallPlan{}, err
	}
	return planUninstall(cfg, o)
}

func planUninstall(cfg *action.Configuration, o Options) (UninstallPlan, error) {
	rel, err := cfg.Releases.Last(o.ReleaseName)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return UninstallPlan{}, nil
	}
	if err != nil {
		return UninstallPlan{}, fmt.Errorf("read release %s: %w", o.ReleaseName, err)
	}
	plan := UninstallPlan{Found: true, Revision: rel.Version}
	if err := checkChart(rel, o.Namespace); err != nil {
		plan.NotBallast = err.(*NotBallastError)
		return plan, nil
	}
	plan.Leases = LeaderLeases(rel.Manifest)
	return plan, nil
}

// Uninstall removes the release and waits for its objects to go, then
// deletes the leader-election Leases its scheduler and descheduler created
// at run time, which Helm does not know of. A release of that name that is
// not of Ballast's chart is left (the plan says so).
func Uninstall(ctx context.Context, o Options) (UninstallPlan, error) {
	cfg, err := o.configuration()
	if err != nil {
		return UninstallPlan{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	plan, err := planUninstall(cfg, o)
	if err != nil || !plan.Found || plan.NotBallast != nil {
		// Nothing to remove; do not create the namespace for the lock.
		return plan, err
	}
	unlock, err := o.lock(ctx)
	if err != nil {
		return plan, err
	}
	defer unlock()
	un := action.NewUninstall(cfg)
	un.Wait, un.Timeout = true, o.Timeout
	if _, err := un.Run(o.ReleaseName); err != nil {
		if errors.Is(err, driver.ErrReleaseNotFound) {
			plan.Found = false
			return plan, nil
		}
		return plan, fmt.Errorf("uninstall release %s: %w", o.ReleaseName, err)
	}
	if o.Client != nil {
		if err := DeleteLeases(ctx, o.Client, plan.Leases); err != nil {
			return plan, err
		}
		// The installer lock goes last: nothing of the release is left.
		unlock()
		if err := o.deleteLock(ctx); err != nil {
			return plan, err
		}
	}
	return plan, nil
}

// ReleaseLeases names the leader-election Leases the release's components
// take at run time (LeaderLeases of its manifest); none when there is no
// release. Whoever uninstalls the release must delete them: Helm never
// created them.
func ReleaseLeases(o Options) ([]types.NamespacedName, error) {
	cfg, err := o.configuration()
	if err != nil {
		return nil, err
	}
	rel, err := action.NewGet(cfg).Run(o.ReleaseName)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read release %s: %w", o.ReleaseName, err)
	}
	return LeaderLeases(rel.Manifest), nil
}

// DeleteLeases deletes leases; one already gone is no error.
func DeleteLeases(ctx context.Context, client kubernetes.Interface, leases []types.NamespacedName) error {
	for _, l := range leases {
		err := client.CoordinationV1().Leases(l.Namespace).Delete(ctx, l.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete leader-election lease %s: %w", l, err)
		}
	}
	return nil
}

var (
	// schedulerLease matches the leaderElection block of a rendered
	// KubeSchedulerConfiguration; descheduler*Lease its flags.
	schedulerLease            = regexp.MustCompile(`(?m)^\s*resourceName:\s*(\S+)\s*\n\s*resourceNamespace:\s*(\S+)\s*$`)
	deschedulerLeaseName      = regexp.MustCompile(`--leader-elect-resource-name=(\S+)`)
	deschedulerLeaseNamespace = regexp.MustCompile(`--leader-elect-resource-namespace=(\S+)`)
)

// LeaderLeases names the Leases that the components of a rendered release
// take for leader election: the scheduler's (from its configuration) and the
// descheduler's (from its flags).
func LeaderLeases(manifest string) []types.NamespacedName {
	var out []types.NamespacedName
	for _, m := range schedulerLease.FindAllStringSubmatch(manifest, -1) {
		out = append(out, types.NamespacedName{Name: unquote(m[1]), Namespace: unquote(m[2])})
	}
	names := deschedulerLeaseName.FindAllStringSubmatch(manifest, -1)
	namespaces := deschedulerLeaseNamespace.FindAllStringSubmatch(manifest, -1)
	for i := range min(len(names), len(namespaces)) {
		out = append(out, types.NamespacedName{Name: unquote(names[i][1]), Namespace: unquote(namespaces[i][1])})
	}
	return out
}

func unquote(s string) string { return strings.Trim(s, `"'`) }

// watchProgress reports Deployment readiness every two seconds until stopped.
func (o Options) watchProgress(ctx context.Context) (stop func()) {
	if o.Progress == nil || o.Client == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(2 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if msg := o.readiness(ctx); msg != "" {
					o.Progress(msg)
				}
			}
		}
	}()
	return func() { cancel(); <-done }
}

func (o Options) readiness(ctx context.Context) string {
	r, err := CheckReadiness(ctx, o.Client, o.Namespace, o.ReleaseName)
	if err != nil || r.Total == 0 {
		return ""
	}
	return "waiting for Ballast: " + r.String()
}

func (o Options) notReady(ctx context.Context) string {
	if o.Client == nil {
		return "readiness unknown"
	}
	r, err := CheckReadiness(ctx, o.Client, o.Namespace, o.ReleaseName)
	if err != nil {
		return "readiness unknown: " + err.Error()
	}
	if r.Done() {
		return "all deployments ready"
	}
	return r.String()
}

// Ready reports whether a Deployment's current generation is fully rolled out and available.
func Ready(d *appsv1.Deployment) bool {
	want := replicas(d)
	return d.Status.ObservedGeneration >= d.Generation &&
		d.Status.UpdatedReplicas == want && d.Status.AvailableReplicas == want && d.Status.ReadyReplicas == want
}

func replicas(d *appsv1.Deployment) int32 {
	if d.Spec.Replicas == nil {
		return 1
	}
	return *d.Spec.Replicas
}
