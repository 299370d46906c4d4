package helminstall

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPodTrouble(t *testing.T) {
	placed := func(statuses ...corev1.ContainerStatus) *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{ContainerStatuses: statuses}}
	}
	waiting := func(reason, msg string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: "c", Image: "ghcr.io/ballast-sched/ballast-scheduler:0.1.0",
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}}
	}
	tests := []struct {
		name string
		pod  *corev1.Pod
		want []string // substrings; none means no trouble
	}{
		{name: "running and ready", pod: placed(corev1.ContainerStatus{Name: "c", Ready: true,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.Now()}}})},
		{name: "starting", pod: placed(waiting("ContainerCreating", ""))},
		{name: "image not there", pod: placed(waiting("ImagePullBackOff", "Back-off pulling image")),
			want: []string{"cannot get image ghcr.io/ballast-sched/ballast-scheduler:0.1.0 on node n1", "ballast install --images"}},
		{name: "unschedulable", pod: &corev1.Pod{Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Message: "0/1 nodes are available: 1 Insufficient memory."}}}},
			want: []string{"is not placed on a node: 0/1 nodes are available"}},
		{name: "no scheduler of that name", pod: &corev1.Pod{Spec: corev1.PodSpec{SchedulerName: "ballast-bootstrap"}},
			want: []string{"waits for scheduler ballast-bootstrap"}},
		{name: "crashing", pod: placed(corev1.ContainerStatus{Name: "c", RestartCount: 4,
			State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
			LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "bad flag\nmore"}}}),
			want: []string{"keeps crashing (4 restarts, last exit 1: bad flag)"}},
		{name: "not ready for long", pod: placed(corev1.ContainerStatus{Name: "c",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Now().Add(-time.Minute))}}}),
			want: []string{"readiness probe"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := PodTrouble(tc.pod)
			if len(tc.want) == 0 && got != "" {
				t.Errorf("PodTrouble = %q, want none", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("PodTrouble = %q, want it to say %q", got, w)
				}
			}
		})
	}
}
