// Package leaderrelease hands a crashed leader's lease on at once. client-go's
// leader election cannot tell a leader that died from one that is slow: a
// standby takes the lease only after it has seen the lease unchanged for the
// whole lease duration, plus up to two jittered retry periods. When the
// kubelet reports that the container of the lease's holder has exited or has
// been restarted since the holder took the lease, the holder is dead for
// certain; the releaser then releases the lease on its behalf, as the leader
// itself does when it stops on SIGTERM, and a standby takes it at its next
// attempt.
//
// A restarted leader knows it without the kubelet: the lease names its own
// pod but was taken before it started.
//
// Only that proof is acted on. A holder on a node that stopped reporting (a
// node that died, a network partition), a pod deleted with force, or a status
// that names no container is left to the lease's expiry, as before.
package leaderrelease

import (
	"context"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// HolderPod is the pod a holder identity names: kube-scheduler's identity is
// the pod's hostname (its name), "_" and a unique suffix.
func HolderPod(identity string) string {
	if i := strings.LastIndex(identity, "_"); i > 0 {
		return identity[:i]
	}
	return identity
}

// Crashed reports whether pod, the holder's pod, proves that the process
// holding lease is gone, and why: no container of the pod is running since
// before the holder took the lease. A process takes the lease after its
// container started, and the kubelet writes the start on the same node's
// clock as the holder writes its acquire time; a container running since
// before then may be the holder, one started later is a restart.
func Crashed(lease *coordinationv1.Lease, pod *corev1.Pod) (string, bool) {
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity == "" || spec.AcquireTime == nil ||
		pod == nil || pod.DeletionTimestamp != nil || len(pod.Status.ContainerStatuses) == 0 {
		return "", false
	}
	acquired := spec.AcquireTime.Time
	var reasons []string
	for _, c := range pod.Status.ContainerStatuses {
		switch {
		case c.State.Running != nil && !c.State.Running.StartedAt.Time.After(acquired):
			return "", false
		case c.State.Running != nil:
			reasons = append(reasons, fmt.Sprintf("container %s restarted at %s, after the lease was taken at %s",
				c.Name, c.State.Running.StartedAt.UTC().Format(time.RFC3339), acquired.UTC().Format(time.RFC3339Nano)))
		case c.State.Terminated != nil:
			reasons = append(reasons, fmt.Sprintf("container %s exited (%s, code %d)", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode))
		default:
			reasons = append(reasons, fmt.Sprintf("container %s is not running", c.Name))
		}
	}
	return strings.Join(reasons, "; "), true
}

// Crashed also holds, without the kubelet's word, when the holder is
// this process's own pod (self) and took the lease before this process
// started: a pod's container runs one process at a time, so the holder was
// this container's previous run. This is what a leader that exited (it lost
// its lease while the API server was down) learns first when the kubelet
// restarts it.
func crashedSelf(lease *coordinationv1.Lease, self string, started time.Time) (string, bool) {
	spec := lease.Spec
	holder := ptr.Deref(spec.HolderIdentity, "")
	if self == "" || holder == "" || HolderPod(holder) != self || spec.AcquireTime == nil || !spec.AcquireTime.Time.Before(started) {
		return "", false
	}
	return fmt.Sprintf("this pod's previous container took the lease at %s, before this one started at %s",
		spec.AcquireTime.UTC().Format(time.RFC3339Nano), started.UTC().Format(time.RFC3339Nano)), true
}

// Releaser watches the pods of the lease's namespace and releases the lease
// when its holder has crashed.
type Releaser struct {
	client    kubernetes.Interface
	pods      corelisters.PodLister
	namespace string
	name      string
	// self is this process's pod (its hostname), started when the releaser
	// was made, before the process could take the lease.
	self    string
	started time.Time
	now     func() time.Time
	// check is signalled on every change of a pod in namespace; one check
	// at a time runs.
	check chan struct{}
}

// New returns a releaser of the lease namespace/name for the process of
// pod self (empty: unknown). Pods come from the informer, which the caller
// starts. Make it before the process takes part in the election.
func New(client kubernetes.Interface, pods cache.SharedIndexInformer, namespace, name, self string) (*Releaser, error) {
	r := &Releaser{client: client, pods: corelisters.NewPodLister(pods.GetIndexer()), namespace: namespace, name: name,
		self: self, started: time.Now(), now: time.Now, check: make(chan struct{}, 1)}
	signal := func(obj any) {
		if p, ok := obj.(*corev1.Pod); ok && p.Namespace == namespace {
			r.signal()
		}
	}
	_, err := pods.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    signal,
		UpdateFunc: func(_, obj any) { signal(obj) },
	})
	if err != nil {
		return nil, fmt.Errorf("watching the pods of %s: %w", namespace, err)
	}
	return r, nil
}

// signal asks Run for a check.
func (r *Releaser) signal() {
	select {
	case r.check <- struct{}{}:
	default:
	}
}

// Run checks the lease on every change of a pod of its namespace until ctx
// ends.
func (r *Releaser) Run(ctx context.Context) {
	logger := klog.FromContext(ctx).WithValues("lease", klog.KRef(r.namespace, r.name))
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.check:
		}
		if err := r.releaseIfCrashed(ctx, logger); err != nil {
			logger.V(2).Info("Could not check the lease's holder; trying again", "err", err)
			// The API server may be down: look again soon.
			time.AfterFunc(time.Second, r.signal)
		}
	}
}

// releaseIfCrashed releases the lease if its holder has crashed. The update
// carries the lease's resourceVersion: if the holder renewed it meanwhile,
// or a standby took it, the update is refused and nothing changes.
func (r *Releaser) releaseIfCrashed(ctx context.Context, logger klog.Logger) error {
	lease, err := r.client.CoordinationV1().Leases(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return nil
		}
		return err
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder == "" {
		return nil
	}
	why, ok := crashedSelf(lease, r.self, r.started)
	if !ok {
		pod, err := r.pods.Pods(r.namespace).Get(HolderPod(holder))
		if err != nil {
			if apierrors.IsNotFound(err) {
				return nil
			}
			return err
		}
		if why, ok = Crashed(lease, pod); !ok {
			return nil
		}
	}
	released := lease.DeepCopy()
	now := metav1.NewMicroTime(r.now())
	// What client-go's elector writes when a leader releases its lease.
	released.Spec.HolderIdentity = ptr.To("")
	released.Spec.LeaseDurationSeconds = ptr.To[int32](1)
	released.Spec.AcquireTime, released.Spec.RenewTime = &now, &now
	if _, err := r.client.CoordinationV1().Leases(r.namespace).Update(ctx, released, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	logger.Info("Released the lease of a crashed leader", "holder", holder, "reason", why)
	return nil
}
