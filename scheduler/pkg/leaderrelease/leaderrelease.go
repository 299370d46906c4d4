// Package leaderrelease hands a crashed leader's lease on at once. client-go's
// leader election cannot tell a leader that died from one that is slow: a
// standby takes the lease only after it has seen the lease unchanged for the
// whole lease duration, plus up to two jittered retry periods. When the
// kubelet reports that the container the holder ran in has ended since the
// holder took the lease, the holder is dead for certain; the releaser then
// releases the lease on its behalf, as the leader itself does when it stops
// on SIGTERM, and a standby takes it at its next attempt.
//
// Releasing a live leader's lease is worse than waiting: its standby takes
// the lease while it keeps scheduling until its renew deadline. So only
// evidence that belongs to the process holding the lease now is acted on:
//
//   - Dated after the lease was taken, on the clock that dated the lease. The
//     holder writes the lease's acquire time on its node's clock, and the
//     kubelet of the same node dates the holder's container; the releaser,
//     on another node, never compares its own clock with either. The holder
//     ran in the one container instance that was running when it took the
//     lease: started at or before the acquire time, and, if it has ended,
//     ended after it. An end before the acquire time is an earlier
//     instance's (a restart the holder followed), whatever a lagging cache
//     shows when.
//   - New since the releaser first saw the lease's current term (holder,
//     acquire time, transitions). A node's clock stepped back (a Raspberry Pi
//     without a real-time clock, corrected by NTP) can date an earlier
//     instance across the acquire time; but every end the cache already
//     showed when the term began is an earlier instance's, and is never
//     evidence, whatever its dates. Ends are told apart by their container
//     IDs: restart counts are not, as a container waiting to restart shows
//     the count of the instance that ended.
//
// Both guards fail together only when a stale cache and a stepped-back clock
// coincide. A crash the guards cannot date (one in the second the lease was
// taken, one after a clock step, one the releaser first sees after the
// fact) is left to the lease's expiry, as is a holder on a node that stopped
// reporting (a node that died, a network partition), a pod deleted with
// force, or a status that names no container.
//
// A restarted leader knows without the kubelet: the lease named its own pod
// before it could take part in the election (ReadPredecessor).
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
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	coordinationinformers "k8s.io/client-go/informers/coordination/v1"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
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
// holding lease is gone, and why: in every container, no instance is running
// since before the holder took the lease, and the instance that was running
// then has ended. Only the pod's own dates are compared with the lease's
// acquire time: the kubelet writes them on the same node's clock as the
// holder wrote the acquire time, in whole seconds, so an instance that
// started in the second of the acquire time may be the holder's, and one
// that ended in that second cannot be told from an earlier one.
func Crashed(lease *coordinationv1.Lease, pod *corev1.Pod) (string, bool) {
	spec := lease.Spec
	if spec.HolderIdentity == nil || *spec.HolderIdentity == "" || spec.AcquireTime == nil ||
		pod == nil || pod.DeletionTimestamp != nil || len(pod.Status.ContainerStatuses) == 0 {
		return "", false
	}
	acquired := spec.AcquireTime.Time
	var reasons []string
	for _, c := range pod.Status.ContainerStatuses {
		if c.State.Running != nil && !c.State.Running.StartedAt.Time.After(acquired) {
			return "", false
		}
		end := heldAt(acquired, c.State.Terminated, c.LastTerminationState.Terminated)
		if end == nil {
			return "", false
		}
		reasons = append(reasons, fmt.Sprintf("container %s ran from %s to %s, across the lease's acquire time %s, and ended (%s, code %d)",
			c.Name, end.StartedAt.UTC().Format(time.RFC3339), end.FinishedAt.UTC().Format(time.RFC3339),
			acquired.UTC().Format(time.RFC3339Nano), end.Reason, end.ExitCode))
	}
	return strings.Join(reasons, "; "), true
}

// heldAt returns the first of ends that the container runtime recorded (it
// names the container) and that ran across acquired: started at or before
// it, ended after it. nil if none did.
func heldAt(acquired time.Time, ends ...*corev1.ContainerStateTerminated) *corev1.ContainerStateTerminated {
	for _, end := range ends {
		if end != nil && end.ContainerID != "" && !end.StartedAt.IsZero() &&
			!end.StartedAt.Time.After(acquired) && end.FinishedAt.Time.After(acquired) {
			return end
		}
	}
	return nil
}

// term is one holder's tenure of the lease, and the pod object it names.
type term struct {
	holder string
	// acquired is the acquire time in microseconds, the lease's precision.
	acquired    int64
	transitions int32
	pod         types.UID
}

func termOf(lease *coordinationv1.Lease, pod *corev1.Pod) term {
	t := term{holder: ptr.Deref(lease.Spec.HolderIdentity, ""), transitions: ptr.Deref(lease.Spec.LeaseTransitions, 0), pod: pod.UID}
	if lease.Spec.AcquireTime != nil {
		t.acquired = lease.Spec.AcquireTime.UnixMicro()
	}
	return t
}

// sighting is what the releaser saw of the holder's pod when it first saw a
// term: the container instances that had ended by then.
type sighting struct {
	term  term
	ended sets.Set[string]
}

// ended returns the container IDs of the instances pod shows ended.
func ended(pod *corev1.Pod) sets.Set[string] {
	ids := sets.New[string]()
	for _, c := range pod.Status.ContainerStatuses {
		for _, end := range []*corev1.ContainerStateTerminated{c.State.Terminated, c.LastTerminationState.Terminated} {
			if end != nil && end.ContainerID != "" {
				ids.Insert(end.ContainerID)
			}
		}
	}
	return ids
}

// without returns pod without the ends of the instances in known.
func without(pod *corev1.Pod, known sets.Set[string]) *corev1.Pod {
	pod = pod.DeepCopy()
	for i := range pod.Status.ContainerStatuses {
		c := &pod.Status.ContainerStatuses[i]
		if end := c.State.Terminated; end != nil && known.Has(end.ContainerID) {
			c.State.Terminated = nil
		}
		if end := c.LastTerminationState.Terminated; end != nil && known.Has(end.ContainerID) {
			c.LastTerminationState.Terminated = nil
		}
	}
	return pod
}

// Releaser watches the lease and the pods of its namespace and releases the
// lease when its holder has crashed.
type Releaser struct {
	client     kubernetes.Interface
	pods       corelisters.PodLister
	podsSynced cache.InformerSynced
	leases     cache.SharedIndexInformer
	lease      coordinationlisters.LeaseLister
	namespace  string
	name       string
	// self is this process's pod (its hostname); predecessor the holder
	// identity naming it that ReadPredecessor found, a process of an
	// earlier container of the pod.
	self        string
	predecessor string
	now         func() time.Time
	// check is signalled on every change of the lease or of a pod in
	// namespace; one check at a time runs.
	check chan struct{}
	// seen is the current term as first seen; only the check touches it.
	seen sighting
}

// New returns a releaser of the lease namespace/name for the process of
// pod self (empty: unknown). Pods come from the informer, which the caller
// starts; the lease from an informer of its own, which Run starts.
func New(client kubernetes.Interface, pods cache.SharedIndexInformer, namespace, name, self string) (*Releaser, error) {
	leases := coordinationinformers.NewFilteredLeaseInformer(client, namespace, 0, cache.Indexers{}, func(o *metav1.ListOptions) {
		o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
	})
	r := &Releaser{client: client, pods: corelisters.NewPodLister(pods.GetIndexer()), podsSynced: pods.HasSynced,
		leases: leases, lease: coordinationlisters.NewLeaseLister(leases.GetIndexer()),
		namespace: namespace, name: name, self: self, now: time.Now, check: make(chan struct{}, 1)}
	signal := func(obj any) {
		switch o := obj.(type) {
		case *corev1.Pod:
			if o.Namespace == namespace {
				r.signal()
			}
		case *coordinationv1.Lease:
			if o.Name == name {
				r.signal()
			}
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: signal, UpdateFunc: func(_, obj any) { signal(obj) }}
	if _, err := pods.AddEventHandler(handler); err != nil {
		return nil, fmt.Errorf("watching the pods of %s: %w", namespace, err)
	}
	if _, err := leases.AddEventHandler(handler); err != nil {
		return nil, fmt.Errorf("watching the lease %s/%s: %w", namespace, name, err)
	}
	return r, nil
}

// ReadPredecessor reads the lease once. Call it before this process takes
// part in the election (kube-scheduler builds its plugins first): a holder
// that names this pod then is a process of an earlier container of the pod,
// which has exited, as the kubelet starts a container again only once it
// has exited. Run releases the lease while that process holds it. Without
// this reading, a lease naming this pod is left to the other replicas and
// to its expiry: any other holder naming this pod is this process.
func (r *Releaser) ReadPredecessor(ctx context.Context) error {
	lease, err := r.client.CoordinationV1().Leases(r.namespace).Get(ctx, r.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the lease %s/%s: %w", r.namespace, r.name, err)
	}
	if holder := ptr.Deref(lease.Spec.HolderIdentity, ""); r.self != "" && holder != "" && HolderPod(holder) == r.self {
		r.predecessor = holder
	}
	return nil
}

// signal asks Run for a check.
func (r *Releaser) signal() {
	select {
	case r.check <- struct{}{}:
	default:
	}
}

// Run checks the lease on every change of it or of a pod of its namespace
// until ctx ends.
func (r *Releaser) Run(ctx context.Context) {
	r.run(ctx, func() {})
}

// run is Run, calling checked after each check.
func (r *Releaser) run(ctx context.Context, checked func()) {
	logger := klog.FromContext(ctx).WithValues("lease", klog.KRef(r.namespace, r.name))
	go r.leases.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), r.podsSynced, r.leases.HasSynced) {
		return
	}
	r.signal()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.check:
		}
		if err := r.releaseIfCrashed(ctx, logger); err != nil {
			logger.V(2).Info("Could not release the lease of a crashed leader; trying again", "err", err)
			// The API server may be down: look again soon.
			time.AfterFunc(time.Second, r.signal)
		}
		checked()
	}
}

// releaseIfCrashed releases the lease if its holder has crashed. The update
// carries the lease's resourceVersion: if the holder renewed it meanwhile,
// or a standby took it, the update is refused and nothing changes.
func (r *Releaser) releaseIfCrashed(ctx context.Context, logger klog.Logger) error {
	lease, err := r.lease.Leases(r.namespace).Get(r.name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the lease from the cache: %w", err)
	}
	holder := ptr.Deref(lease.Spec.HolderIdentity, "")
	if holder == "" {
		return nil
	}
	why, ok := r.crashedPredecessor(lease)
	if !ok {
		if r.self != "" && HolderPod(holder) == r.self {
			// This process: it is running.
			return nil
		}
		pod, err := r.pods.Pods(r.namespace).Get(HolderPod(holder))
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the holder's pod from the cache: %w", err)
		}
		if why, ok = Crashed(lease, r.news(lease, pod)); !ok {
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
		return fmt.Errorf("releasing the lease: %w", err)
	}
	logger.Info("Released the lease of a crashed leader", "holder", holder, "reason", why)
	return nil
}

// crashedPredecessor reports whether the lease is held by the process that
// ReadPredecessor found, an earlier container's of this pod.
func (r *Releaser) crashedPredecessor(lease *coordinationv1.Lease) (string, bool) {
	if r.predecessor == "" || ptr.Deref(lease.Spec.HolderIdentity, "") != r.predecessor {
		return "", false
	}
	return fmt.Sprintf("%s, a process of this pod's earlier container, held the lease when this one started", r.predecessor), true
}

// news returns pod as evidence about the lease's current term: without the
// ends of the instances it showed ended when the releaser first saw the term
// with this pod. At that first sight it is no evidence at all.
func (r *Releaser) news(lease *coordinationv1.Lease, pod *corev1.Pod) *corev1.Pod {
	if t := termOf(lease, pod); r.seen.term != t || r.seen.ended == nil {
		r.seen = sighting{term: t, ended: ended(pod)}
	}
	return without(pod, r.seen.ended)
}
