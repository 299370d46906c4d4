//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/e2e/pkg/lane"
)

// What a homelab runs besides Deployments, on the fault suite's cluster: a
// StatefulSet whose volume is kept on the hogged node, as k3s's local-path
// provisioner keeps every volume on the node it was first used on, and a
// CronJob whose runs come and go all through the suite.
const (
	localStorageClass = "ballast-e2e-local"
	pinnedName        = "pinned"
	pinnedMemory      = "200Mi"
	backupName        = "backup"
)

// startPinned creates a local PersistentVolume on the first node (node
// affinity to it, like local-path's), a StorageClass that binds it when a pod
// is scheduled, and a one-replica StatefulSet for Ballast's scheduler whose
// claim takes it; the pod holds pinnedMemory, so that it would be worth
// moving off the node once the node is hot. It returns the pod's UID once it
// runs there.
func startPinned(ctx context.Context, t *testing.T, l *lane.Lane) types.UID {
	t.Helper()
	c := l.Client
	dir := filepath.Join(l.Dir, "volumes", pinnedName)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: localStorageClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
	if _, err := c.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: pinnedName + "-data"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              localStorageClass,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{lane.NodeName}}},
			}}}},
		},
	}
	if _, err := c.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": pinnedName}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: pinnedName, Namespace: faultsNS},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Selector: labels},
	}
	if _, err := c.CoreV1().Services(faultsNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: pinnedName, Namespace: faultsNS},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    ptr.To[int32](1),
			ServiceName: pinnedName,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SchedulerName:                 ballastScheduler,
					TerminationGracePeriodSeconds: ptr.To[int64](1),
					Containers: []corev1.Container{{
						Name: "db", Image: hogImage, ImagePullPolicy: corev1.PullNever,
						Args: []string{"--memory", pinnedMemory},
						Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
							corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse(pinnedMemory),
						}},
						VolumeMounts:    []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
						SecurityContext: restricted(),
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					StorageClassName: ptr.To(localStorageClass),
					AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
	if _, err := c.AppsV1().StatefulSets(faultsNS).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var uid types.UID
	poll(ctx, t, "the pinned StatefulSet's pod to run on "+lane.NodeName, 3*time.Minute, func(ctx context.Context) (bool, string) {
		p, err := c.CoreV1().Pods(faultsNS).Get(ctx, pinnedName+"-0", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		uid = p.UID
		return podReady(*p) && p.Spec.NodeName == lane.NodeName, fmt.Sprintf("node %q phase %s", p.Spec.NodeName, p.Status.Phase)
	})
	return uid
}

// checkPinnedStays holds the pinned pod to what a user of a stateful app
// expects while its node is hot: the very pod that started is still
// running there (its replacement could only come back, or stay Pending),
// and `ballast explain node` says it is pinned, and by what.
func checkPinnedStays(ctx context.Context, t *testing.T, f *faultEnv, uid types.UID) {
	t.Helper()
	hogged := f.lane.Nodes()[0]
	p, err := f.client.CoreV1().Pods(faultsNS).Get(ctx, pinnedName+"-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.UID != uid || p.Spec.NodeName != hogged || !podReady(*p) {
		t.Errorf("%s-0 is %s on %q (ready %t), want the pod that started (%s) still running on %s: a pod its volume pins was moved",
			pinnedName, p.UID, p.Spec.NodeName, podReady(*p), uid, hogged)
	}
	ex := explainNode(t, f, hogged)
	want := faultsNS + "/" + pinnedName + "-0"
	for _, pp := range ex.Pinned {
		if pp.Pod == want {
			if !strings.Contains(pp.Why, "volume") {
				t.Errorf("ballast explain node %s says %s is pinned because %q; want its volume named", hogged, want, pp.Why)
			}
			t.Logf("ballast explain node %s: %s pinned: %s", hogged, want, pp.Why)
			return
		}
	}
	t.Errorf("ballast explain node %s lists %v as pinned, want %s among them", hogged, ex.Pinned, want)
}

// startBackups creates a CronJob for Ballast's scheduler that runs every
// minute: a pod that holds a little memory for 20 s and ends, as a backup or
// a media scan does. Its runs are kept so that every one can be checked.
func startBackups(ctx context.Context, t *testing.T, c kubernetes.Interface) {
	t.Helper()
	cj := &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: backupName, Namespace: faultsNS},
		Spec: batchv1.CronJobSpec{
			Schedule:                   "* * * * *",
			ConcurrencyPolicy:          batchv1.ForbidConcurrent,
			SuccessfulJobsHistoryLimit: ptr.To[int32](60),
			FailedJobsHistoryLimit:     ptr.To[int32](60),
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
				BackoffLimit: ptr.To[int32](2),
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": backupName}},
					Spec: corev1.PodSpec{
						SchedulerName:                 ballastScheduler,
						RestartPolicy:                 corev1.RestartPolicyNever,
						TerminationGracePeriodSeconds: ptr.To[int64](1),
						Containers: []corev1.Container{{
							Name: "backup", Image: hogImage, ImagePullPolicy: corev1.PullNever,
							Args: []string{"--memory", "32Mi", "--for", "20s"},
							Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
								corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("32Mi"),
							}},
							SecurityContext: restricted(),
						}},
					},
				},
			}},
		},
	}
	if _, err := c.BatchV1().CronJobs(faultsNS).Create(ctx, cj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// window is a span of time during which a node could take no pod.
type window struct {
	node       string
	start, end time.Time
}

// checkBackupsPlacedByLoad holds the CronJob's runs to what load-aware
// placement promises while the first node is hot: each run's pod was placed
// by Ballast's scheduler on the other node, unless that node could take no
// pod at the time (down) or the scheduler had no usable usage then — a fault
// took load-watcher or the scheduler's leader away, and it placed by
// requests, as it must, saying so in a Warning event on the pod — ran to its
// end, and none was evicted.
func checkBackupsPlacedByLoad(ctx context.Context, t *testing.T, f *faultEnv, down []window) {
	t.Helper()
	hogged, other := f.lane.Nodes()[0], f.lane.Nodes()[1]
	pods, err := f.client.CoreV1().Pods(faultsNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + backupName})
	if err != nil {
		t.Fatal(err)
	}
	perNode, succeeded, excused, byRequests := map[string]int{}, 0, 0, 0
	for _, p := range pods.Items {
		if p.Spec.NodeName == "" {
			continue
		}
		perNode[p.Spec.NodeName]++
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded++
		}
		if p.Spec.SchedulerName != ballastScheduler {
			t.Errorf("backup pod %s names scheduler %q, want %s", p.Name, p.Spec.SchedulerName, ballastScheduler)
		}
		if p.Status.Reason == "Evicted" || strings.Contains(p.Status.Message, "evict") {
			t.Errorf("backup pod %s was evicted (%s: %s): a pod that runs to completion is never moved", p.Name, p.Status.Reason, p.Status.Message)
		}
		if p.Spec.NodeName == other {
			continue
		}
		bound := scheduledAt(p)
		if otherDown(down, other, bound) {
			excused++
			continue
		}
		why := placementEvents(ctx, t, f.client, p)
		if unusable, ok := why["unusable"]; ok {
			byRequests++
			t.Logf("backup pod %s placed on %s at %s by requests: %s", p.Name, p.Spec.NodeName, bound.Format(time.TimeOnly), unusable)
			continue
		}
		t.Errorf("backup pod %s was placed on %s, the hogged node, at %s while %s had room and usage was fresh (%s)", p.Name, p.Spec.NodeName,
			bound.Format(time.TimeOnly), other, why["placed"])
	}
	// A suite of some ten minutes runs the CronJob about ten times; fewer
	// than three would make the check above say little.
	if succeeded < 3 {
		t.Errorf("only %d runs of the CronJob succeeded (pods per node %v); want at least 3", succeeded, perNode)
	}
	t.Logf("CronJob %s: %d pods, %d succeeded, per node %v (%s hogged; placed there: %d while %s was down, %d by requests while usage was unusable)",
		backupName, len(pods.Items), succeeded, perNode, hogged, excused, other, byRequests)
}

// placementEvents reads what Ballast's scheduler said of placing p: the
// note of its LoadAwarePlaced event ("placed"), and a Warning that it placed by
// requests because usage was missing, stale or refused ("unusable").
func placementEvents(ctx context.Context, t *testing.T, c kubernetes.Interface, p corev1.Pod) map[string]string {
	t.Helper()
	events, err := c.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(p.UID)})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, e := range events.Items {
		switch e.Reason {
		case "UsageMissing", "UsageStale", "UsageInvalid":
			out["unusable"] = e.Reason + ": " + e.Message
		case "LoadAwarePlaced":
			out["placed"] = e.Message
		}
	}
	return out
}

// scheduledAt is when the API server stamped the pod's binding (whole
// seconds), or its creation when it has none.
func scheduledAt(p corev1.Pod) time.Time {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionTrue {
			return c.LastTransitionTime.Time
		}
	}
	return p.CreationTimestamp.Time
}

// otherDown reports whether node was in one of the windows at t, give or
// take the second the API server's stamps round to.
func otherDown(down []window, node string, at time.Time) bool {
	for _, w := range down {
		if w.node == node && !at.Before(w.start.Add(-time.Second)) && !at.After(w.end.Add(time.Second)) {
			return true
		}
	}
	return false
}
