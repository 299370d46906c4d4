package leaderrelease

import (
	"context"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

var acquired = time.Date(2026, 11, 26, 12, 0, 0, 500_000_000, time.UTC)

func lease(holder string) *coordinationv1.Lease {
	at := metav1.NewMicroTime(acquired)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "ballast-scheduler", Namespace: "ballast-system", ResourceVersion: "7"},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), LeaseDurationSeconds: ptr.To[int32](15),
			AcquireTime: &at, RenewTime: &at, LeaseTransitions: ptr.To[int32](3)},
	}
}

func pod(states ...corev1.ContainerState) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "ballast-scheduler-7d44b5bf6c-xgf2c", Namespace: "ballast-system"}}
	for _, s := range states {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "scheduler", State: s})
	}
	return p
}

func running(at time.Time) corev1.ContainerState {
	return corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(at)}}
}

func TestCrashed(t *testing.T) {
	const holder = "ballast-scheduler-7d44b5bf6c-xgf2c_0b1c"
	deleted := pod(running(acquired.Add(3 * time.Second)))
	deleted.DeletionTimestamp = ptr.To(metav1.Now())
	tests := []struct {
		name  string
		lease *coordinationv1.Lease
		pod   *corev1.Pod
		want  bool
	}{
		// The holder's container has run since a minute before it took the lease.
		{name: "holder running", lease: lease(holder), pod: pod(running(acquired.Add(-time.Minute))), want: false},
		// The kubelet writes whole seconds: 12:00:00 is before 12:00:00.5, the holder may be that process.
		{name: "started in the same second", lease: lease(holder), pod: pod(running(acquired.Truncate(time.Second))), want: false},
		{name: "restarted after the lease was taken", lease: lease(holder), pod: pod(running(acquired.Add(3 * time.Second))), want: true},
		{name: "exited", lease: lease(holder), pod: pod(corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{Reason: "Error", ExitCode: 137}}), want: true},
		{name: "waiting to restart", lease: lease(holder), pod: pod(corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}), want: true},
		// A node that stopped reporting leaves the status as it was: no proof.
		{name: "no container status", lease: lease(holder), pod: pod(), want: false},
		// A pod being deleted stops on SIGTERM and releases the lease itself.
		{name: "pod terminating", lease: lease(holder), pod: deleted, want: false},
		{name: "released lease", lease: lease(""), pod: pod(running(acquired.Add(3 * time.Second))), want: false},
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

func TestReleaseIfCrashed(t *testing.T) {
	tests := []struct {
		name       string
		pod        *corev1.Pod
		wantHolder string
	}{
		{name: "holder alive: lease kept", pod: pod(running(acquired.Add(-time.Minute))), wantHolder: "ballast-scheduler-7d44b5bf6c-xgf2c_0b1c"},
		{name: "holder restarted: lease released", pod: pod(running(acquired.Add(2 * time.Second))), wantHolder: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			client := fake.NewClientset(lease("ballast-scheduler-7d44b5bf6c-xgf2c_0b1c"), tc.pod)
			factory := informers.NewSharedInformerFactory(client, 0)
			r, err := New(client, factory.Core().V1().Pods().Informer(), "ballast-system", "ballast-scheduler", "ballast-scheduler-7d44b5bf6c-8czpb")
			if err != nil {
				t.Fatal(err)
			}
			factory.Start(ctx.Done())
			factory.WaitForCacheSync(ctx.Done())
			if err := r.releaseIfCrashed(ctx, klog.Background()); err != nil {
				t.Fatal(err)
			}
			got, err := client.CoordinationV1().Leases("ballast-system").Get(ctx, "ballast-scheduler", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if h := ptr.Deref(got.Spec.HolderIdentity, ""); h != tc.wantHolder {
				t.Errorf("holder %q, want %q", h, tc.wantHolder)
			}
			// A released lease keeps its transitions and lasts a second, as client-go releases it.
			if tc.wantHolder == "" && (ptr.Deref(got.Spec.LeaseDurationSeconds, 0) != 1 || ptr.Deref(got.Spec.LeaseTransitions, 0) != 3) {
				t.Errorf("released lease %+v, want a duration of 1 s and 3 transitions", got.Spec)
			}
		})
	}
}

func TestCrashedSelf(t *testing.T) {
	const self = "ballast-scheduler-7d44b5bf6c-xgf2c"
	tests := []struct {
		name    string
		holder  string
		started time.Time
		want    bool
	}{
		// This process started after its pod's previous container took the lease.
		{name: "previous run of this container", holder: self + "_0b1c", started: acquired.Add(20 * time.Second), want: true},
		// This process took the lease itself after it started.
		{name: "this process", holder: self + "_9f3e", started: acquired.Add(-time.Second), want: false},
		{name: "another pod", holder: "ballast-scheduler-7d44b5bf6c-8czpb_0b1c", started: acquired.Add(20 * time.Second), want: false},
		{name: "released", holder: "", started: acquired.Add(20 * time.Second), want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if why, got := crashedSelf(lease(tc.holder), self, tc.started); got != tc.want {
				t.Errorf("crashedSelf = %t (%q), want %t", got, why, tc.want)
			}
		})
	}
}
