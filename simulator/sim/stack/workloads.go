package stack

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

const (
	// volumeName is the claim template of every StatefulSet: its replica i's
	// claim is data-<name>-<i>.
	volumeName = "data"
	// volumeSize is what each replica's claim asks for; nothing counts it.
	volumeSize = "1Gi"
	// successfulRunsKept is how many finished Jobs of a CronJob are kept,
	// Kubernetes' default successfulJobsHistoryLimit.
	successfulRunsKept = 3
	// scheduledAnnotation is the time a CronJob's Job was due, as the
	// CronJob controller records it.
	scheduledAnnotation = "batch.kubernetes.io/cronjob-scheduled-timestamp"
	// jobNameLabel is the label the Job controller puts on its pods.
	jobNameLabel = batchv1.JobNameLabel
)

// statefulSet is w as a StatefulSet whose every replica has a volume of the
// cluster's local-path class. Its pods are created together
// (podManagementPolicy Parallel), not each once the last runs: the
// simulation places pods between steps, and an ordered StatefulSet would
// wait for a pod the scheduler has not placed yet.
func statefulSet(w scenario.Workload) *appsv1.StatefulSet {
	d := deployment(w)
	tmpl := d.Spec.Template
	tmpl.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: volumeName, MountPath: "/data"}}
	return &appsv1.StatefulSet{
		ObjectMeta: d.ObjectMeta,
		Spec: appsv1.StatefulSetSpec{
			Replicas: d.Spec.Replicas, Selector: d.Spec.Selector, Template: tmpl, ServiceName: w.Name,
			PodManagementPolicy:  appsv1.ParallelPodManagement,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: volumeName}, Spec: claimSpec()}},
		},
	}
}

func claimSpec() corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		StorageClassName: ptr.To(cluster.LocalPathStorageClass),
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(volumeSize)}},
	}
}

// claimName is the claim of replica i of StatefulSet w.
func claimName(w scenario.Workload, i int) string {
	return fmt.Sprintf("%s-%s-%d", volumeName, w.Name, i)
}

// createVolumes makes the volumes w's VolumeNodes say already exist, each
// on its node as the local-path provisioner would have made it, with its
// claim, and waits until the PV controller has bound each pair.
func (s *Stack) createVolumes(ctx context.Context, w scenario.Workload) error {
	for i, node := range w.VolumeNodes {
		claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claimName(w, i), Namespace: namespaceOf(w)}, Spec: claimSpec()}
		pvName := fmt.Sprintf("pvc-%s-%s", claim.Namespace, claim.Name)
		claim.Spec.VolumeName = pvName
		spec := claimSpec()
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: pvName, Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": cluster.LocalPathProvisioner}},
			Spec: corev1.PersistentVolumeSpec{
				Capacity: spec.Resources.Requests, AccessModes: spec.AccessModes, StorageClassName: cluster.LocalPathStorageClass,
				ClaimRef:                      &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1", Namespace: claim.Namespace, Name: claim.Name},
				PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimDelete,
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
					Path: cluster.LocalPathDir + "/" + pvName, Type: ptr.To(corev1.HostPathDirectoryOrCreate)}},
				NodeAffinity: cluster.PinnedTo(node),
			},
		}
		if _, err := s.c.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating the volume of %s on %s: %w", claim.Name, node, err)
		}
		if _, err := s.c.Client.CoreV1().PersistentVolumeClaims(claim.Namespace).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating claim %s: %w", claim.Name, err)
		}
	}
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for i := range w.VolumeNodes {
			c, err := s.c.Client.CoreV1().PersistentVolumeClaims(namespaceOf(w)).Get(ctx, claimName(w, i), metav1.GetOptions{})
			if err != nil || c.Status.Phase != corev1.ClaimBound {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the volumes of %s to be bound: %w", w.Name, err)
	}
	return nil
}

// jobTemplate is the Job a run of w starts: Parallelism pods, each running
// once for RunFor (in the stack's clock time) and ending Succeeded. A pod
// deleted with its node (an outage) is replaced, however often.
func (s *Stack) jobTemplate(w scenario.Workload) batchv1.JobTemplateSpec {
	d := deployment(w)
	tmpl := d.Spec.Template
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyNever
	tmpl.Annotations = map[string]string{cluster.RunsForAnnotation: s.clockTime(w.RunFor.Duration).String()}
	return batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: d.Labels},
		Spec: batchv1.JobSpec{
			Parallelism: ptr.To(w.Parallelism), Completions: ptr.To(w.Parallelism),
			BackoffLimit: ptr.To[int32](math.MaxInt32), Template: tmpl,
		},
	}
}

// clockTime is scenario time d in the stack's clock time.
func (s *Stack) clockTime(d time.Duration) time.Duration {
	if s.cfg.Speed == 0 || s.cfg.Speed == 1 {
		return d
	}
	return time.Duration(float64(d) / s.cfg.Speed)
}

// cronJob is w as a CronJob. The in-process cluster runs no CronJob
// controller, which reads the real clock: Runs starts its Jobs on the
// scenario's time.
func (s *Stack) cronJob(w scenario.Workload) *batchv1.CronJob {
	tmpl := s.jobTemplate(w)
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: namespaceOf(w), Labels: tmpl.Labels},
		Spec: batchv1.CronJobSpec{
			Schedule: w.Schedule, ConcurrencyPolicy: batchv1.ConcurrencyPolicy(w.ConcurrencyPolicy), JobTemplate: tmpl,
			SuccessfulJobsHistoryLimit: ptr.To[int32](successfulRunsKept),
		},
	}
}

// Runs, at scenario time t, ends the pods of Jobs whose run is over (on a
// stepped stack; otherwise the kubelet stand-in ends them by itself), and
// starts the Jobs due since the last call: a Job at its Start, a CronJob's
// at the latest time of its schedule since then, as its
// concurrencyPolicy allows, keeping its last successfulRunsKept finished
// Jobs. It waits until the Job controller has made every pod the Jobs
// want, so that they reach the scheduler in the same order in every run.
func (s *Stack) Runs(ctx context.Context, t time.Duration) error {
	if s.cfg.Stepped {
		if _, err := s.c.EndRuns(ctx); err != nil {
			return err
		}
	}
	from := s.runsUntil
	s.runsUntil = t
	started := false
	for _, w := range s.sc.Workloads {
		due, ok := w.LastRunIn(from, t)
		if !ok {
			continue
		}
		var err error
		if w.Kind == scenario.Job {
			err = s.startJob(ctx, w, w.Name, nil, due)
		} else {
			err = s.startCronRun(ctx, w, due)
		}
		if err != nil {
			return fmt.Errorf("starting a run of %s: %w", w.Name, err)
		}
		started = true
	}
	if !started {
		return nil
	}
	return s.waitPods(ctx, "the Jobs' pods", func(w scenario.Workload) bool { return w.RunsToCompletion() })
}

// startJob creates the Job name of w, owned by owner when not nil, due at
// scenario time due.
func (s *Stack) startJob(ctx context.Context, w scenario.Workload, name string, owner *batchv1.CronJob, due time.Duration) error {
	tmpl := s.jobTemplate(w)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespaceOf(w), Labels: tmpl.Labels}, Spec: tmpl.Spec}
	if owner != nil {
		job.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(owner, batchv1.SchemeGroupVersion.WithKind("CronJob"))}
		job.Annotations = map[string]string{scheduledAnnotation: scenario.ScheduleEpoch.Add(due).Format(time.RFC3339)}
	}
	if _, err := s.c.Client.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating job %s: %w", name, err)
	}
	klog.FromContext(ctx).V(2).Info("Started a run", "job", klog.KObj(job), "due", due)
	return nil
}

// startCronRun starts the run of CronJob w due at scenario time due, named
// as the CronJob controller names it (the due time in minutes), unless its
// concurrencyPolicy forbids it; with Replace, the runs still going are
// stopped first. Then the oldest finished runs beyond successfulRunsKept
// are deleted, with their pods (no garbage collector runs).
func (s *Stack) startCronRun(ctx context.Context, w scenario.Workload, due time.Duration) error {
	cj, err := s.c.Client.BatchV1().CronJobs(namespaceOf(w)).Get(ctx, w.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading cronjob %s: %w", w.Name, err)
	}
	runs, err := s.jobRuns(ctx, w)
	if err != nil {
		return err
	}
	var going, finished []jobRun
	for _, r := range runs {
		if r.finished() {
			finished = append(finished, r)
		} else {
			going = append(going, r)
		}
	}
	switch {
	case len(going) > 0 && w.ConcurrencyPolicy == scenario.ForbidConcurrent:
		klog.FromContext(ctx).V(2).Info("Skipped a run: the last still runs", "cronjob", klog.KObj(cj), "due", due)
		return nil
	case len(going) > 0 && w.ConcurrencyPolicy == scenario.ReplaceConcurrent:
		for _, r := range going {
			if err := s.deleteRun(ctx, w, r.name); err != nil {
				return err
			}
		}
	}
	name := fmt.Sprintf("%s-%d", w.Name, scenario.ScheduleEpoch.Add(due).Unix()/60)
	if err := s.startJob(ctx, w, name, cj, due); err != nil {
		return err
	}
	for len(finished) > successfulRunsKept {
		if err := s.deleteRun(ctx, w, finished[0].name); err != nil {
			return err
		}
		finished = finished[1:]
	}
	return nil
}

// deleteRun deletes Job name of w and its pods.
func (s *Stack) deleteRun(ctx context.Context, w scenario.Workload, name string) error {
	ns := namespaceOf(w)
	err := s.c.Client.BatchV1().Jobs(ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationOrphan)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting job %s: %w", name, err)
	}
	pods, err := s.c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: jobNameLabel + "=" + name})
	if err != nil {
		return fmt.Errorf("listing the pods of job %s: %w", name, err)
	}
	for _, p := range pods.Items {
		err := s.c.Client.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting pod %s of job %s: %w", p.Name, name, err)
		}
	}
	return nil
}

// jobRun is one Job of a workload and how many of its pods succeeded.
type jobRun struct {
	name        string
	completions int32
	succeeded   int32
}

// finished: every pod the Job wants has succeeded. Read from its pods,
// whose end the Job controller writes into the Job's status a moment later,
// or from that status once it says the Job is over.
func (r jobRun) finished() bool { return r.succeeded >= r.completions }

// jobRuns lists w's Jobs, oldest first (by name: a CronJob's Jobs are
// named after their due minute).
func (s *Stack) jobRuns(ctx context.Context, w scenario.Workload) ([]jobRun, error) {
	ns := namespaceOf(w)
	jobs, err := s.c.Client.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: model.WorkloadLabel + "=" + w.Name})
	if err != nil {
		return nil, fmt.Errorf("listing the jobs of %s: %w", w.Name, err)
	}
	pods, err := s.c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: model.WorkloadLabel + "=" + w.Name})
	if err != nil {
		return nil, fmt.Errorf("listing the pods of %s: %w", w.Name, err)
	}
	succeeded := map[string]int32{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodSucceeded {
			succeeded[p.Labels[jobNameLabel]]++
		}
	}
	runs := make([]jobRun, 0, len(jobs.Items))
	for _, j := range jobs.Items {
		if j.DeletionTimestamp != nil {
			continue
		}
		r := jobRun{name: j.Name, completions: ptr.Deref(j.Spec.Completions, 1), succeeded: succeeded[j.Name]}
		for _, c := range j.Status.Conditions {
			if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
				r.succeeded = max(r.succeeded, r.completions)
			}
		}
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b jobRun) int {
		return cmp.Or(cmp.Compare(len(a.name), len(b.name)), strings.Compare(a.name, b.name))
	})
	return runs, nil
}

// JobPods is how many pods of each Job and CronJob should be there, not
// finished, now: for every Job whose run is not over, its pods that have
// not succeeded yet.
func (s *Stack) JobPods(ctx context.Context) (map[string]int32, error) {
	out := map[string]int32{}
	for _, w := range s.sc.Workloads {
		if !w.RunsToCompletion() {
			continue
		}
		runs, err := s.jobRuns(ctx, w)
		if err != nil {
			return nil, err
		}
		out[w.Name] = 0
		for _, r := range runs {
			out[w.Name] += max(r.completions-r.succeeded, 0)
		}
	}
	return out, nil
}

// Expected is how many pods that are not finished each scenario workload
// created so far should have now: Replicas, and JobPods.
func (s *Stack) Expected(ctx context.Context) (map[string]int32, error) {
	want, err := s.JobPods(ctx)
	if err != nil {
		return nil, err
	}
	for w, n := range s.replicas {
		want[w] = n
	}
	return want, nil
}

// waitPods waits until every workload of which has as many pods that are
// not finished, nor terminating, as Expected says.
func (s *Stack) waitPods(ctx context.Context, what string, which func(scenario.Workload) bool) error {
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		want, err := s.Expected(ctx)
		if err != nil {
			return false, nil
		}
		pods, err := s.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: model.WorkloadLabel})
		if err != nil {
			return false, nil
		}
		count := map[string]int32{}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
				count[p.Labels[model.WorkloadLabel]]++
			}
		}
		for _, w := range s.sc.Workloads {
			if n, created := want[w.Name]; created && which(w) && count[w.Name] != n {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
