package cluster_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/cluster"
)

// A StatefulSet's claim on the default local-path class gets a volume on the
// node its pod was first placed on, as k3s's provisioner makes one; the
// pod's replacement goes back to that node however busy it is, and stays
// Pending while that node is cordoned.
func TestStatefulSetVolumePinsItsPod(t *testing.T) {
	c, ctx := startScheduling(t, "node-a", "node-b")
	labels := map[string]string{"app": "db"}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "default"},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels}, ServiceName: "db",
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "db", Image: "registry.invalid/db",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}}}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}},
		},
	}
	if _, err := c.Client.AppsV1().StatefulSets("default").Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := waitForRunningPods(t, c, "app=db", 1)[0]
	claim, err := c.Client.CoreV1().PersistentVolumeClaims("default").Get(ctx, "data-db-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claim.Status.Phase != corev1.ClaimBound || ptr.Deref(claim.Spec.StorageClassName, "") != cluster.LocalPathStorageClass {
		t.Fatalf("claim %s: phase %s, class %v; want Bound on %s", claim.Name, claim.Status.Phase, claim.Spec.StorageClassName, cluster.LocalPathStorageClass)
	}
	pv, err := c.Client.CoreV1().PersistentVolumes().Get(ctx, claim.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values; len(got) != 1 || got[0] != first.Spec.NodeName {
		t.Fatalf("volume %s is pinned to %v, want the pod's node %s", pv.Name, got, first.Spec.NodeName)
	}

	// Replaced, the pod goes back to its volume's node, though the other is
	// as good by every other measure.
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "db-0", metav1.GetOptions{})
		return err == nil && p.UID != first.UID && p.Status.Phase == corev1.PodRunning, nil
	})
	if err != nil {
		t.Fatalf("db-0 was not replaced: %v", err)
	}
	if p, _ := c.Client.CoreV1().Pods("default").Get(ctx, "db-0", metav1.GetOptions{}); p.Spec.NodeName != first.Spec.NodeName {
		t.Errorf("db-0's replacement is on %s, want %s where its volume is", p.Spec.NodeName, first.Spec.NodeName)
	}

	// Its node cordoned, a replacement has nowhere to go.
	if err := c.SetUnschedulable(ctx, first.Spec.NodeName, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Client.CoreV1().Pods("default").Delete(ctx, "db-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second)
	p, err := c.Client.CoreV1().Pods("default").Get(ctx, "db-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName != "" {
		t.Errorf("db-0 was placed on %s while its volume's node was cordoned", p.Spec.NodeName)
	}
}

// A Job's pod runs for what its RunsForAnnotation says by the cluster's
// clock, no longer: EndRuns ends it then, Succeeded, and the Job
// controller completes the Job; before, it ends nothing.
func TestJobPodEndsWhenItsRunIsOver(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	clk := testingclock.NewFakePassiveClock(time.Now().Truncate(time.Second))
	c, err := cluster.Start(t, cluster.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: "node-a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.StartScheduler(ctx, "", nil); err != nil {
		t.Fatal(err)
	}
	job := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "scan", Namespace: "default"},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "scan"}, Annotations: map[string]string{cluster.RunsForAnnotation: "3m"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{Name: "scan", Image: "registry.invalid/scan"}}}}},
	}
	if _, err := c.Client.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitForRunningPods(t, c, "app=scan", 1)
	for _, tc := range []struct {
		advance time.Duration
		ended   int
	}{{2*time.Minute + 59*time.Second, 0}, {time.Second, 1}, {time.Minute, 0}} {
		clk.SetTime(clk.Now().Add(tc.advance))
		ended, err := c.EndRuns(ctx)
		if err != nil || ended != tc.ended {
			t.Fatalf("EndRuns %s later: ended %d, %v; want %d", tc.advance, ended, err, tc.ended)
		}
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		j, err := c.Client.BatchV1().Jobs("default").Get(ctx, "scan", metav1.GetOptions{})
		return err == nil && j.Status.Succeeded == 1 && j.Status.CompletionTime != nil, nil
	})
	if err != nil {
		t.Fatalf("the Job was not completed: %v", err)
	}
}
