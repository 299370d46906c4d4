package helminstall

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// A ballast command that changes the release holds a Lease in the release's
// namespace while it runs, so that two of them never interleave and so that
// the next one knows a release left pending was abandoned: Helm records a
// revision as pending-install or pending-upgrade before it applies the
// objects and refuses every later operation on the release ("another
// operation is in progress") until something marks it otherwise, and a
// command killed in between (Ctrl-C twice, a lost SSH session, an OOM kill)
// never does.
const (
	lockSuffix = "-installer"
	// lockDuration is how long a lock outlives its holder; the holder
	// renews it every lockRetry.
	lockDuration = 15 * time.Second
	lockRenew    = 10 * time.Second
	lockRetry    = 2 * time.Second
)

// lock takes the release's installer Lease, waiting (up to ctx) while
// another live command holds it, and returns the function that releases it.
// The Lease is renewed in the background until then.
func (o Options) lock(ctx context.Context) (unlock func(), err error) {
	if o.Client == nil {
		return func() {}, nil
	}
	if err := ensureNamespace(ctx, o.Client, o.Namespace); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s_%d_%s", host, os.Getpid(), uuid.NewUUID())
	lk := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: o.Namespace, Name: o.ReleaseName + lockSuffix},
		Client:     o.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: id},
	}
	held := make(chan struct{})
	lost := make(chan struct{})
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lk, LeaseDuration: lockDuration, RenewDeadline: lockRenew, RetryPeriod: lockRetry,
		ReleaseOnCancel: true, Name: "ballast-installer",
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) { close(held) },
			OnStoppedLeading: func() { close(lost) },
		},
	})
	if err != nil {
		cancel()
		return nil, fmt.Errorf("prepare the installer lock: %w", err)
	}
	go elector.Run(runCtx)
	var once sync.Once
	unlock = func() {
		once.Do(func() {
			cancel()
			<-lost
		})
	}
	waiting := time.NewTimer(lockRetry + time.Second)
	defer waiting.Stop()
	for {
		select {
		case <-held:
			return unlock, nil
		case <-waiting.C:
			if o.Progress != nil {
				o.Progress(fmt.Sprintf("waiting for lock %s/%s%s, held by %q (another ballast install, upgrade or uninstall; "+
					"an interrupted one's lock expires %s after its last renewal)", o.Namespace, o.ReleaseName, lockSuffix,
					elector.GetLeader(), lockDuration))
			}
		case <-ctx.Done():
			unlock()
			return nil, fmt.Errorf("another ballast install, upgrade or uninstall holds lock %s/%s%s (%q): %w",
				o.Namespace, o.ReleaseName, lockSuffix, elector.GetLeader(), ctx.Err())
		}
	}
}

func ensureNamespace(ctx context.Context, c kubernetes.Interface, name string) error {
	_, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s: %w", name, err)
	}
	return nil
}

// recoverInterrupted marks the newest revision of the release failed when
// it is still pending: with the installer lock held, no command is working
// on it, so the one that wrote it was interrupted. Helm then upgrades from
// the last deployed revision (or, after an interrupted first install, from
// the failed one), which is what running the command again should do. It
// reports whether it changed anything.
func recoverInterrupted(cfg *action.Configuration, name string) (*release.Release, error) {
	last, err := cfg.Releases.Last(name)
	if err != nil {
		return nil, nil //nolint:nilerr // no release: nothing to recover
	}
	if last.Info == nil || !last.Info.Status.IsPending() {
		return nil, nil
	}
	was := last.Info.Status
	last.SetStatus(release.StatusFailed, fmt.Sprintf("interrupted while %s: the ballast command that started it ended before it finished", was))
	if err := cfg.Releases.Update(last); err != nil {
		return nil, fmt.Errorf("mark interrupted revision %d of release %s failed: %w", last.Version, name, err)
	}
	return last, nil
}

// deleteLock removes the installer Lease of a release that is gone. The
// caller has released it.
func (o Options) deleteLock(ctx context.Context) error {
	err := o.Client.CoordinationV1().Leases(o.Namespace).Delete(ctx, o.ReleaseName+lockSuffix, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the installer lock %s/%s%s: %w", o.Namespace, o.ReleaseName, lockSuffix, err)
	}
	return nil
}
