package k3s

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
)

// helmJobChartLabel is the label helm-controller puts on the pods of the
// Jobs that install, upgrade and uninstall a HelmChart, naming the chart.
const helmJobChartLabel = "helmcharts.helm.cattle.io/chart"

// BindHelmJobPods places the pending pods of helm-controller's Jobs for
// Ballast's HelmChart that wait for default-scheduler, as a scheduler would:
// in replaceDefault mode only Ballast serves default-scheduler, so with
// Ballast broken nothing else ever places them. Each goes to the first
// node in prefer, then any other node, that is Ready, schedulable, matches
// its node selector and whose taints it tolerates. Binding is atomic: a pod
// another scheduler bound meanwhile is left alone. It returns the pods bound.
func BindHelmJobPods(ctx context.Context, client kubernetes.Interface, prefer ...string) ([]string, error) {
	pods, err := client.CoreV1().Pods(HelmChartNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{helmJobChartLabel: HelmChartName}.String(),
		FieldSelector: fields.Set{"spec.nodeName": ""}.String(),
	})
	if err != nil {
		return nil, fmt.Errorf("list helm-controller's job pods for %s: %w", HelmChartName, err)
	}
	var waiting []corev1.Pod
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodPending && p.DeletionTimestamp == nil && p.Spec.SchedulerName == corev1.DefaultSchedulerName {
			waiting = append(waiting, p)
		}
	}
	if len(waiting) == 0 {
		return nil, nil
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	candidates := nodes.Items
	slices.SortStableFunc(candidates, func(a, b corev1.Node) int {
		return preference(prefer, a.Name) - preference(prefer, b.Name)
	})
	var bound []string
	var errs []error
	for i := range waiting {
		p := &waiting[i]
		node := firstFit(klog.FromContext(ctx), p, candidates)
		if node == "" {
			errs = append(errs, fmt.Errorf("no Ready, schedulable node fits pod %s/%s (node selector %v, tolerations %v)",
				p.Namespace, p.Name, p.Spec.NodeSelector, p.Spec.Tolerations))
			continue
		}
		err := client.CoreV1().Pods(p.Namespace).Bind(ctx, &corev1.Binding{
			ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			Target:     corev1.ObjectReference{Kind: "Node", Name: node},
		}, metav1.CreateOptions{})
		switch {
		case err == nil:
			bound = append(bound, p.Name+" to "+node)
		case apierrors.IsConflict(err), apierrors.IsNotFound(err):
			// Bound by a scheduler meanwhile, or gone.
		default:
			errs = append(errs, fmt.Errorf("bind pod %s/%s to node %s: %w", p.Namespace, p.Name, node, err))
		}
	}
	return bound, errors.Join(errs...)
}

// preference ranks name by its position in prefer; others come after.
func preference(prefer []string, name string) int {
	if i := slices.Index(prefer, name); i >= 0 {
		return i
	}
	return len(prefer)
}

// firstFit returns the first node that can run p, "" when none can.
func firstFit(logger klog.Logger, p *corev1.Pod, nodes []corev1.Node) string {
	for i := range nodes {
		if fits(logger, p, &nodes[i]) {
			return nodes[i].Name
		}
	}
	return ""
}

func fits(logger klog.Logger, p *corev1.Pod, n *corev1.Node) bool {
	if n.Spec.Unschedulable || n.DeletionTimestamp != nil || !ready(n) {
		return false
	}
	if !labels.SelectorFromSet(p.Spec.NodeSelector).Matches(labels.Set(n.Labels)) {
		return false
	}
	for i := range n.Spec.Taints {
		t := &n.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		if !slices.ContainsFunc(p.Spec.Tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(logger, t, false) }) {
			return false
		}
	}
	return true
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// InstallJobName is the Job helm-controller runs to install or upgrade
// Ballast's HelmChart.
const InstallJobName = "helm-install-" + HelmChartName

// InstallJobState says what helm-controller's install Job for Ballast's
// HelmChart is doing, for a user waiting on it: not made yet, its pod not
// placed or not started (and why), running, failed (with the pod's last
// words), or done.
func InstallJobState(ctx context.Context, client kubernetes.Interface) string {
	job, err := client.BatchV1().Jobs(HelmChartNamespace).Get(ctx, InstallJobName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "no Job " + InstallJobName + " yet (k3s reads its manifests directory every 15 s)"
	}
	if err != nil {
		return "Job " + InstallJobName + ": " + err.Error()
	}
	if job.Status.Succeeded > 0 {
		return "Job " + InstallJobName + " succeeded"
	}
	pods, err := client.CoreV1().Pods(HelmChartNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{helmJobChartLabel: HelmChartName}.String()})
	if err != nil || len(pods.Items) == 0 {
		if job.Spec.Suspend != nil && *job.Spec.Suspend {
			return "Job " + InstallJobName + " created, not started yet"
		}
		return "Job " + InstallJobName + " has no pod yet"
	}
	slices.SortFunc(pods.Items, func(a, b corev1.Pod) int { return b.CreationTimestamp.Compare(a.CreationTimestamp.Time) })
	p := &pods.Items[0]
	if t := helminstall.PodTrouble(p); t != "" {
		return "Job " + InstallJobName + ": pod " + p.Name + " " + t
	}
	state := fmt.Sprintf("Job %s: pod %s %s", InstallJobName, p.Name, p.Status.Phase)
	if job.Status.Failed > 0 {
		state += fmt.Sprintf(", %d failed attempts", job.Status.Failed)
		for _, st := range p.Status.ContainerStatuses {
			if t := st.LastTerminationState.Terminated; t != nil && strings.TrimSpace(t.Message) != "" {
				state += ", last: " + strings.TrimSpace(t.Message)
			}
		}
	}
	return state
}
