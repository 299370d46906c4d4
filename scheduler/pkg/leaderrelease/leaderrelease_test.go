package leaderrelease

import (
	"context"
	"strconv"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

// acquired is when the holder took the lease, on its node's clock.
var acquired = time.Date(2026, 11, 26, 12, 0, 0, 500_000_000, time.UTC)

const (
	holderPod = "ballast-scheduler-7d44b5bf6c-xgf2c"
	holder    = holderPod + "_0b1c"
	// standby is the pod of the releaser in most tests.
	standby = "ballast-scheduler-7d44b5bf6c-8czpb"
)

func lease(holder string) *coordinationv1.Lease {
	at := metav1.NewMicroTime(acquired)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "ballast-scheduler", Namespace: "ballast-system", ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &at, RenewTime: &at, LeaseTransitions: ptr.To[int32](3)},
	}
}

// retaken is the lease taken again by holder, at acquire time at.
func retaken(holder string, at time.Time) *coordinationv1.Lease {
	l := lease(holder)
	t := metav1.NewMicroTime(at)
	l.Spec.AcquireTime, l.Spec.RenewTime, l.Spec.LeaseTransitions = &t, &t, ptr.To[int32](4)
	return l
}

func pod(statuses ...corev1.ContainerStatus) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: holderPod, Namespace: "ballast-system", UID: "5f0c"},
		Status: corev1.PodStatus{ContainerStatuses: statuses}}
}

// kubelet is a time of the holder's node, d after the acquire time, in the
// whole seconds the kubelet writes.
func kubelet(d time.Duration) metav1.Time {
	return metav1.NewTime(acquired.Add(d).Truncate(time.Second))
}

// running is a container's status: instance id running since d after the
// acquire time, after the instances of ends (the newest first).
func running(id string, d time.Duration, ends ...*corev1.ContainerStateTerminated) corev1.ContainerStatus {
	c := corev1.ContainerStatus{Name: "scheduler", ContainerID: "containerd://" + id,
		State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: kubelet(d)}}}
	if len(ends) > 0 {
		c.LastTerminationState.Terminated, c.RestartCount = ends[0], int32(len(ends))
	}
	return c
}

// exited is a container's status: the newest of ends is its state.
func exited(ends ...*corev1.ContainerStateTerminated) corev1.ContainerStatus {
	c := corev1.ContainerStatus{Name: "scheduler", ContainerID: ends[0].ContainerID, RestartCount: int32(len(ends) - 1),
		State: corev1.ContainerState{Terminated: ends[0]}}
	if len(ends) > 1 {
		c.LastTerminationState.Terminated = ends[1]
	}
	return c
}

// backingOff is a container's status while the kubelet waits to start it
// again: the newest of ends is its last state, and its restart count is
// that instance's.
func backingOff(ends ...*corev1.ContainerStateTerminated) corev1.ContainerStatus {
	return corev1.ContainerStatus{Name: "scheduler", ContainerID: ends[0].ContainerID, RestartCount: int32(len(ends) - 1),
		State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
		LastTerminationState: corev1.ContainerState{Terminated: ends[0]}}
}

// end is instance id's end: it ran from from to to after the acquire time.
func end(id string, from, to time.Duration) *corev1.ContainerStateTerminated {
	return &corev1.ContainerStateTerminated{ContainerID: "containerd://" + id, Reason: "Error", ExitCode: 137,
		StartedAt: kubelet(from), FinishedAt: kubelet(to)}
}

func TestCrashed(t *testing.T) {
	deleted := pod(running("c2", 3*time.Second, end("c1", -time.Minute, 2*time.Second)))
	deleted.DeletionTimestamp = ptr.To(metav1.Now())
	unknown := end("c1", -time.Minute, 2*time.Second)
	unknown.ContainerID = ""
	neverStarted := end("c1", -time.Minute, 2*time.Second)
	neverStarted.StartedAt = metav1.Time{}
	sidecar := running("s1", -time.Hour)
	sidecar.Name = "sidecar"
	tests := []struct {
		name  string
		lease *coordinationv1.Lease
		pod   *corev1.Pod
		want  bool
	}{
		// The holder's container has run since a minute before it took the lease.
		{name: "holder running", lease: lease(holder), pod: pod(running("c1", -time.Minute)), want: false},
		// The kubelet writes whole seconds: 12:00:00 is before 12:00:00.5, the holder may be that process.
		{name: "started in the same second", lease: lease(holder), pod: pod(running("c1", 0)), want: false},
		// c1 ran across the acquire time and ended; c2 started after it.
		{name: "restarted after the lease was taken", lease: lease(holder),
			pod: pod(running("c2", 3*time.Second, end("c1", -time.Minute, 2*time.Second))), want: true},
		{name: "exited", lease: lease(holder), pod: pod(exited(end("c1", -time.Minute, 2*time.Second))), want: true},
		{name: "waiting to restart", lease: lease(holder), pod: pod(backingOff(end("c1", -time.Minute, 2*time.Second))), want: true},
		// c1 ran across the acquire time; c2 started after it and ended too.
		{name: "crash loop", lease: lease(holder),
			pod: pod(exited(end("c2", 12*time.Second, 14*time.Second), end("c1", -time.Minute, 2*time.Second))), want: true},

		// A stale cache: the kubelet's word from before the lease was taken.
		// c1 ended 10 s before the holder, the process of c2, took the
		// lease; the cache has not yet seen c2 start.
		{name: "stale cache: exited before the acquire", lease: lease(holder),
			pod: pod(exited(end("c1", -time.Minute, -10*time.Second))), want: false},
		{name: "stale cache: waiting to restart since before the acquire", lease: lease(holder),
			pod: pod(backingOff(end("c1", -time.Minute, -10*time.Second))), want: false},
		// A quick restart: c1 ended, c2's process took the lease 2 s later.
		{name: "quick restart that retook the lease", lease: lease(holder),
			pod: pod(running("c2", -time.Second, end("c1", -time.Minute, -2*time.Second))), want: false},
		// A clock stepped back: c1 started at 12:00:20 on the node's clock,
		// the clock went back a minute, and the process of c1 took the lease
		// at 11:59:20 + 40 s.
		{name: "clock stepped back after the container started", lease: lease(holder),
			pod: pod(running("c1", 20*time.Second)), want: false},
		// Ended in the second the lease was taken: not told from an earlier instance.
		{name: "ended in the second of the acquire", lease: lease(holder),
			pod: pod(backingOff(end("c1", -time.Minute, 300*time.Millisecond))), want: false},
		// An end the runtime did not record (the kubelet's ContainerStatusUnknown) has no date to trust.
		{name: "end without a container", lease: lease(holder), pod: pod(backingOff(unknown)), want: false},
		{name: "end of an instance that never started", lease: lease(holder), pod: pod(backingOff(neverStarted)), want: false},
		{name: "another container running since before", lease: lease(holder),
			pod: pod(backingOff(end("c1", -time.Minute, 2*time.Second)), sidecar), want: false},
		// A node that stopped reporting leaves the status as it was: no proof.
		{name: "no container status", lease: lease(holder), pod: pod(), want: false},
		// A pod being deleted stops on SIGTERM and releases the lease itself.
		{name: "pod terminating", lease: lease(holder), pod: deleted, want: false},
		{name: "released lease", lease: lease(""), pod: pod(running("c2", 3*time.Second, end("c1", -time.Minute, 2*time.Second))), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why, got := Crashed(tc.lease, tc.pod)
			if got != tc.want {
				t.Errorf("Crashed = %t (%q), want %t", got, why, tc.want)
			}
			if got && why == "" {
				t.Error("a crash without a reason")
			}
		})
	}
}

// step is what the API server holds at one moment: the lease, and the
// holder's pod as the releaser's cache shows it.
type step struct {
	lease      *coordinationv1.Lease
	pod        *corev1.Pod
	wantHolder string
}

// releaser returns a releaser for the process of pod self, with the
// objects of the first step, its caches synced.
func releaser(ctx context.Context, t *testing.T, self string, first step) (*Releaser, *fake.Clientset, informers.SharedInformerFactory) {
	t.Helper()
	client := fake.NewClientset(first.lease, first.pod)
	factory := informers.NewSharedInformerFactory(client, 0)
	r, err := New(client, factory.Core().V1().Pods().Informer(), "ballast-system", "ballast-scheduler", self)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReadPredecessor(ctx); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	go r.leases.Run(ctx.Done())
	if !waitFor(ctx, r.podsSynced, r.leases.HasSynced) {
		t.Fatal("caches not synced")
	}
	return r, client, factory
}

func waitFor(ctx context.Context, conditions ...func() bool) bool {
	return wait.PollUntilContextTimeout(ctx, 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		for _, c := range conditions {
			if !c() {
				return false, nil
			}
		}
		return true, nil
	}) == nil
}

// play has the releaser check after each step and compares the lease's
// holder with the step's.
func play(t *testing.T, self string, steps []step) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, client, _ := releaser(ctx, t, self, steps[0])
	for i, s := range steps {
		if i > 0 {
			// Mark the objects of this step so as to wait for the caches to hold them.
			s.lease.Annotations = map[string]string{"step": strconv.Itoa(i)}
			s.pod.Annotations = map[string]string{"step": strconv.Itoa(i)}
			if _, err := client.CoordinationV1().Leases("ballast-system").Update(ctx, s.lease, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := client.CoreV1().Pods("ballast-system").Update(ctx, s.pod, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			seen := func(get func() (metav1.Object, error)) func() bool {
				return func() bool { o, err := get(); return err == nil && o.GetAnnotations()["step"] == strconv.Itoa(i) }
			}
			if !waitFor(ctx,
				seen(func() (metav1.Object, error) { return r.lease.Leases("ballast-system").Get("ballast-scheduler") }),
				seen(func() (metav1.Object, error) { return r.pods.Pods("ballast-system").Get(holderPod) })) {
				t.Fatalf("step %d: the caches did not see it", i)
			}
		}
		if err := r.releaseIfCrashed(ctx, klog.Background()); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		got, err := client.CoordinationV1().Leases("ballast-system").Get(ctx, "ballast-scheduler", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if h := ptr.Deref(got.Spec.HolderIdentity, ""); h != s.wantHolder {
			t.Fatalf("step %d: holder %q, want %q", i, h, s.wantHolder)
		}
		if s.wantHolder == "" {
			// A released lease keeps its transitions and lasts a second, as client-go releases it.
			if ptr.Deref(got.Spec.LeaseDurationSeconds, 0) != 1 || ptr.Deref(got.Spec.LeaseTransitions, 0) != ptr.Deref(s.lease.Spec.LeaseTransitions, 0) {
				t.Errorf("step %d: released lease %+v, want a duration of 1 s and the transitions kept", i, got.Spec)
			}
		}
	}
}

func TestReleaser(t *testing.T) {
	const restarted = holderPod + "_77aa"
	tests := []struct {
		name  string
		self  string
		steps []step
	}{
		{name: "holder alive: lease kept", self: standby, steps: []step{
			{lease: lease(holder), pod: pod(running("c1", -time.Minute)), wantHolder: holder},
			{lease: lease(holder), pod: pod(running("c1", -time.Minute)), wantHolder: holder},
		}},
		// The kubelet reports the holder's container dead a second after the crash.
		{name: "holder crashed: lease released", self: standby, steps: []step{
			{lease: lease(holder), pod: pod(running("c1", -time.Minute)), wantHolder: holder},
			{lease: lease(holder), pod: pod(backingOff(end("c1", -time.Minute, time.Minute))), wantHolder: ""},
		}},
		{name: "holder crashed and restarted: lease released", self: standby, steps: []step{
			{lease: lease(holder), pod: pod(running("c1", -time.Minute)), wantHolder: holder},
			{lease: lease(holder), pod: pod(running("c2", time.Minute, end("c1", -time.Minute, time.Minute))), wantHolder: ""},
		}},
		// The process of c2 took the lease 2 s after c1 ended; the cache
		// shows c1's end for a while yet.
		{name: "quick restart that retook the lease", self: standby, steps: []step{
			{lease: lease(restarted), pod: pod(backingOff(end("c1", -time.Minute, -2*time.Second))), wantHolder: restarted},
			{lease: lease(restarted), pod: pod(exited(end("c1", -time.Minute, -2*time.Second))), wantHolder: restarted},
			{lease: lease(restarted), pod: pod(running("c2", -time.Second, end("c1", -time.Minute, -2*time.Second))), wantHolder: restarted},
		}},
		// The releaser saw the term of the holder of c1 end, released it,
		// then the term the restarted process took with c1's end still in
		// its cache.
		{name: "quick restart after a release", self: standby, steps: []step{
			{lease: lease(holder), pod: pod(running("c1", -time.Minute)), wantHolder: holder},
			{lease: lease(holder), pod: pod(backingOff(end("c1", -time.Minute, 5*time.Second))), wantHolder: ""},
			{lease: retaken(restarted, acquired.Add(8*time.Second)), pod: pod(backingOff(end("c1", -time.Minute, 5*time.Second))), wantHolder: restarted},
			{lease: retaken(restarted, acquired.Add(8*time.Second)), pod: pod(running("c2", 7*time.Second, end("c1", -time.Minute, 5*time.Second))), wantHolder: restarted},
		}},
		// The node's clock ran ahead: c1 ran from 11:59:30 to 12:00:20 and
		// c2 started at 12:00:25 by it. Then it was stepped back, and the
		// process of c2 took the lease at 12:00:00.5: c1 seems to have held
		// the lease, c2 to have started after it.
		{name: "clock stepped back", self: standby, steps: []step{
			{lease: lease(restarted), pod: pod(running("c2", 25*time.Second, end("c1", -30*time.Second, 20*time.Second))), wantHolder: restarted},
			{lease: lease(restarted), pod: pod(running("c2", 25*time.Second, end("c1", -30*time.Second, 20*time.Second))), wantHolder: restarted},
		}},
		// The releaser first sees the term after the holder's end: it cannot
		// tell it from an end the cache showed before the term began.
		{name: "crash seen only after the fact: left to the lease's expiry", self: standby, steps: []step{
			{lease: lease(holder), pod: pod(backingOff(end("c1", -time.Minute, time.Minute))), wantHolder: holder},
		}},
		// The pod's only container started after the lease by its clock.
		{name: "clock stepped back after the start", self: standby, steps: []step{
			{lease: lease(holder), pod: pod(running("c1", 20*time.Second)), wantHolder: holder},
			{lease: lease(holder), pod: pod(running("c1", 20*time.Second)), wantHolder: holder},
		}},
		// The holder is this process: its clock was stepped back between
		// its start and the acquire time, so the lease seems older than it.
		{name: "this process, its clock stepped back", self: holderPod, steps: []step{
			{lease: lease(standby + "_0b1c"), pod: pod(running("c1", 20*time.Second)), wantHolder: standby + "_0b1c"},
			{lease: lease(restarted), pod: pod(running("c1", 20*time.Second)), wantHolder: restarted},
		}},
		// The lease named this pod before the process could take it: its
		// earlier container's process holds it.
		{name: "this pod's earlier container", self: holderPod, steps: []step{
			{lease: lease(holder), pod: pod(running("c2", time.Minute, end("c1", -time.Minute, 50*time.Second))), wantHolder: ""},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { play(t, tc.self, tc.steps) })
	}
}

// TestRun releases a crashed holder's lease from the releaser's own
// informers: the lease's term is first seen with the holder running.
func TestRun(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	client := fake.NewClientset(lease(holder), pod(running("c1", -time.Minute)))
	factory := informers.NewSharedInformerFactory(client, 0)
	r, err := New(client, factory.Core().V1().Pods().Informer(), "ballast-system", "ballast-scheduler", standby)
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	checked := make(chan struct{}, 1)
	go r.run(ctx, func() {
		select {
		case checked <- struct{}{}:
		default:
		}
	})
	// The first check, once the caches are synced, sees the term while the holder runs.
	select {
	case <-checked:
	case <-time.After(10 * time.Second):
		t.Fatal("no check")
	}
	if _, err := client.CoreV1().Pods("ballast-system").UpdateStatus(ctx, pod(backingOff(end("c1", -time.Minute, time.Minute))), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	released := func() bool {
		l, err := client.CoordinationV1().Leases("ballast-system").Get(ctx, "ballast-scheduler", metav1.GetOptions{})
		return err == nil && ptr.Deref(l.Spec.HolderIdentity, "") == ""
	}
	if !waitFor(ctx, released) {
		t.Error("the crashed holder's lease was not released")
	}
}
