package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
)

// TestInterruptedInstallIsFinishedByTheNextOne leaves the release as a
// killed `ballast install` leaves it — a pending-upgrade revision recorded
// and the command's lock no longer renewed — and runs the command again: it
// must wait for the lock to lapse, mark the abandoned revision failed and
// upgrade, where Helm alone refuses ("another operation is in progress").
// While another command holds the lock and renews it, a run must give up
// with a message that says so, and change nothing.
func TestInterruptedInstallIsFinishedByTheNextOne(t *testing.T) {
	c, ctx := startCluster(t)
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-a", CPU: "4", Memory: "8Gi"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartScheduler(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	const ns, name = "ballast-system", "ballast"
	opts := helminstall.Options{
		Getter: helmGetter(c, ns), Client: c.Client, ReleaseName: name, Namespace: ns,
		Values: map[string]any{"descheduler": map[string]any{"dryRun": true}}, Timeout: 3 * time.Minute,
	}
	if _, _, err := helminstall.InstallOrUpgrade(ctx, opts); err != nil {
		t.Fatalf("first install: %v", err)
	}

	cfg := &action.Configuration{}
	if err := cfg.Init(helmGetter(c, ns), ns, "secret", func(string, ...any) {}); err != nil {
		t.Fatal(err)
	}
	last, err := cfg.Releases.Last(name)
	if err != nil {
		t.Fatal(err)
	}
	abandoned := *last
	abandoned.Version = last.Version + 1
	abandoned.Info = &release.Info{Status: release.StatusPendingUpgrade, Description: "Preparing upgrade"}
	if err := cfg.Releases.Create(&abandoned); err != nil {
		t.Fatal(err)
	}
	// The lock the killed command held: released by nobody, renewed a
	// moment ago.
	lock, err := c.Client.CoordinationV1().Leases(ns).Get(ctx, name+"-installer", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the installer's lock after an install: %v", err)
	}
	lock.Spec = coordinationv1.LeaseSpec{
		HolderIdentity: ptr.To("killed_1234_x"), LeaseDurationSeconds: ptr.To[int32](15),
		AcquireTime: &metav1.MicroTime{Time: time.Now().Add(-time.Minute)},
		RenewTime:   &metav1.MicroTime{Time: time.Now()},
	}
	if _, err := c.Client.CoordinationV1().Leases(ns).Update(ctx, lock, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Another command holds the lock and renews it: this one gives up.
	renewCtx, stopRenewing := context.WithCancel(ctx)
	go func() {
		for renewCtx.Err() == nil {
			l, err := c.Client.CoordinationV1().Leases(ns).Get(renewCtx, lock.Name, metav1.GetOptions{})
			if err == nil {
				l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
				_, _ = c.Client.CoordinationV1().Leases(ns).Update(renewCtx, l, metav1.UpdateOptions{})
			}
			select {
			case <-renewCtx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	busy := opts
	busy.Timeout = 6 * time.Second
	_, _, err = helminstall.InstallOrUpgrade(ctx, busy)
	stopRenewing()
	if err == nil || !strings.Contains(err.Error(), "another ballast install, upgrade or uninstall holds lock") ||
		!strings.Contains(err.Error(), "killed_1234_x") {
		t.Fatalf("install while another command holds the lock: err = %v, want it to name the holder", err)
	}
	if got, _ := cfg.Releases.Last(name); got.Info.Status != release.StatusPendingUpgrade {
		t.Fatalf("a refused install changed the release: revision %d is %s", got.Version, got.Info.Status)
	}

	// The holder is gone (it stopped renewing): the next run finishes the job.
	var progress []string
	opts.Progress = func(s string) { progress = append(progress, s) }
	rel, upgraded, err := helminstall.InstallOrUpgrade(ctx, opts)
	if err != nil {
		t.Fatalf("install after an interrupted one: %v (progress %v)", err, progress)
	}
	if !upgraded || rel.Info.Status != release.StatusDeployed || rel.Version != abandoned.Version+1 {
		t.Errorf("release after recovery: upgraded=%t revision %d %s, want revision %d deployed", upgraded, rel.Version, rel.Info.Status, abandoned.Version+1)
	}
	if got, err := cfg.Releases.Get(name, abandoned.Version); err != nil || got.Info.Status != release.StatusFailed {
		t.Errorf("the abandoned revision %d after recovery: %+v %v, want failed", abandoned.Version, got.Info, err)
	}
	if !strings.Contains(strings.Join(progress, "\n"), "interrupted") {
		t.Errorf("the recovery was not reported: %v", progress)
	}

	// Uninstall leaves no lock behind.
	if _, err := helminstall.Uninstall(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.CoordinationV1().Leases(ns).Get(ctx, lock.Name, metav1.GetOptions{}); err == nil {
		t.Errorf("the installer lock %s survived uninstall", lock.Name)
	}
}
