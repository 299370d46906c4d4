package snapshot

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// A StatefulSet is carried over with the nodes its replicas' volumes live
// on, read from the volumes' node affinity, as far as they are on one node;
// a CronJob with its schedule and the time its last finished run took.
// What does not carry over as it is, the description says.
func TestTakeStatefulSetsAndCronJobs(t *testing.T) {
	node := func(name string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/hostname": name}},
			Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi")}}}
	}
	template := corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("250m"), corev1.ResourceMemory: resource.MustParse("1Gi")}}}}}}
	claim := func(name, volume string) *corev1.PersistentVolumeClaim {
		return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "home"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: volume}}
	}
	volume := func(name string, nodes ...string) *corev1.PersistentVolume {
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if len(nodes) > 0 {
			pv.Spec.NodeAffinity = &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: nodes}}}}}}
		}
		return pv
	}
	sts := func(name string, replicas int32) *appsv1.StatefulSet {
		return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "home"}, Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To(replicas), Template: template, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}}}}}
	}
	backup := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "backup", Namespace: "home", UID: "cj-backup"}, Spec: batchv1.CronJobSpec{
		Schedule: "0 3 * * *", TimeZone: ptr.To("Europe/Paris"), ConcurrencyPolicy: batchv1.ForbidConcurrent,
		JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: template}}}}
	started := metav1.NewTime(time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC))
	ran := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "backup-29433780", Namespace: "home",
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(backup, batchv1.SchemeGroupVersion.WithKind("CronJob"))}},
		Status: batchv1.JobStatus{StartTime: &started, CompletionTime: ptr.To(metav1.NewTime(started.Add(7*time.Minute + 20*time.Second)))}}
	objs := []runtime.Object{node("pi-1"), node("pi-2"),
		// db: replica 0 on pi-2, replica 1's volume on both nodes.
		sts("db", 3), claim("data-db-0", "pv-0"), volume("pv-0", "pi-2"), claim("data-db-1", "pv-1"), volume("pv-1", "pi-1", "pi-2"),
		// ha: no volume bound yet.
		sts("ha", 1),
		backup, ran}
	sc, err := Take(context.Background(), fake.NewClientset(objs...), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]scenario.Workload{}
	for _, w := range sc.Workloads {
		byName[w.Name] = w
	}
	db, ha, cj := byName["db"], byName["ha"], byName["backup"]
	if db.Kind != scenario.StatefulSet || db.Replicas != 3 || !cmp.Equal(db.VolumeNodes, []string{"pi-2"}) {
		t.Errorf("db = %s, %d replicas, volumes on %v; want a StatefulSet of 3, replica 0's volume on pi-2", db.Kind, db.Replicas, db.VolumeNodes)
	}
	if ha.Kind != scenario.StatefulSet || len(ha.VolumeNodes) != 0 {
		t.Errorf("ha = %s, volumes on %v; want a StatefulSet whose volume is made where it is placed", ha.Kind, ha.VolumeNodes)
	}
	if cj.Kind != scenario.CronJob || cj.Schedule != "0 3 * * *" || cj.RunFor.Duration != 7*time.Minute+20*time.Second ||
		cj.ConcurrencyPolicy != scenario.ForbidConcurrent || cj.Parallelism != 1 || cj.Usage.CPU.Value.String() != "250m" {
		t.Errorf("backup = %+v; want the CronJob, its last run's 7m20s, its requests for usage", cj)
	}
	for _, want := range []string{"2 StatefulSets and 1 CronJobs", "StatefulSet home/db: the volumes of replicas 1 and up",
		"reachable from 2 nodes", "CronJob home/backup: its schedule is read in UTC, not Europe/Paris"} {
		if !strings.Contains(sc.Description, want) {
			t.Errorf("description %q does not say %q", sc.Description, want)
		}
	}
}
