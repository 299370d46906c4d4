package helminstall

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// ImagesHint tells a user whose nodes cannot pull Ballast's images how to
// bring them.
const ImagesHint = "no registry serves them here: push them to a registry your nodes pull from " +
	"(make push REGISTRY=host[:port]/path, then ballast install --registry host[:port]/path), or bring the images archive of each node's architecture " +
	"(make images, or a release's ballast-images-linux-<arch>.tar), on k3s with `ballast install --images <archive or dir>` " +
	"(docs/install.md#any-cluster-from-a-checkout)"

// Readiness is how far the release's Deployments are rolled out, and what
// keeps each one that is not.
type Readiness struct {
	Total, Ready int
	// NotReady holds, per Deployment that is not ready, its name and what
	// its pods wait for.
	NotReady []string
}

// Done reports whether there are Deployments and every one is ready.
func (r Readiness) Done() bool { return r.Total > 0 && r.Ready == r.Total }

func (r Readiness) String() string {
	if r.Total == 0 {
		return "no Deployment of the release yet"
	}
	s := fmt.Sprintf("%d/%d deployments ready", r.Ready, r.Total)
	if len(r.NotReady) > 0 {
		s += "; " + strings.Join(r.NotReady, "; ")
	}
	return s
}

// CheckReadiness reads the release's Deployments and, for each one not
// ready, its pods.
func CheckReadiness(ctx context.Context, client kubernetes.Interface, namespace, release string) (Readiness, error) {
	list, err := client.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release})
	if err != nil {
		return Readiness{}, fmt.Errorf("list the Deployments of release %s: %w", release, err)
	}
	ds := list.Items
	sort.Slice(ds, func(i, j int) bool { return ds[i].Name < ds[j].Name })
	r := Readiness{Total: len(ds)}
	for i := range ds {
		d := &ds[i]
		if Ready(d) {
			r.Ready++
			continue
		}
		r.NotReady = append(r.NotReady, fmt.Sprintf("%s %d/%d ready%s", d.Name, d.Status.ReadyReplicas, replicas(d), deploymentTrouble(ctx, client, d)))
	}
	return r, nil
}

// deploymentTrouble says what the first troubled pod of d waits for, as
// ": <what>", or "".
func deploymentTrouble(ctx context.Context, client kubernetes.Interface, d *appsv1.Deployment) string {
	if d.Spec.Selector == nil {
		return ""
	}
	pods, err := client.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(d.Spec.Selector.MatchLabels).String()})
	if err != nil {
		return ""
	}
	for i := range pods.Items {
		if t := PodTrouble(&pods.Items[i]); t != "" {
			return ": pod " + pods.Items[i].Name + " " + t
		}
	}
	return ""
}

// PodTrouble says what keeps a pod from running ready, "" when nothing
// visible does: not placed (and why), an image that cannot be pulled, a
// container that keeps crashing or has not passed its readiness probe.
func PodTrouble(p *corev1.Pod) string {
	if p.DeletionTimestamp != nil {
		return ""
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			msg := c.Message
			if msg == "" {
				msg = c.Reason
			}
			if p.Spec.SchedulerName != "" && p.Spec.SchedulerName != corev1.DefaultSchedulerName && msg == "" {
				msg = "no scheduler named " + p.Spec.SchedulerName + " has placed it"
			}
			return "is not placed on a node: " + msg
		}
	}
	if p.Spec.NodeName == "" {
		return "waits for scheduler " + p.Spec.SchedulerName + " to place it"
	}
	for _, st := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		w := st.State.Waiting
		switch {
		case w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "ErrImageNeverPull"):
			return fmt.Sprintf("cannot get image %s on node %s (%s): %s", st.Image, p.Spec.NodeName, w.Reason, ImagesHint)
		case w != nil && w.Reason == "CrashLoopBackOff":
			last := ""
			if t := st.LastTerminationState.Terminated; t != nil {
				last = fmt.Sprintf(", last exit %d", t.ExitCode)
				if m := strings.TrimSpace(t.Message); m != "" {
					last += ": " + firstLine(m)
				}
			}
			return fmt.Sprintf("container %s keeps crashing (%d restarts%s)", st.Name, st.RestartCount, last)
		case w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing":
			return fmt.Sprintf("container %s waits: %s %s", st.Name, w.Reason, firstLine(w.Message))
		case st.State.Running != nil && !st.Ready && time.Since(st.State.Running.StartedAt.Time) > 30*time.Second:
			return fmt.Sprintf("container %s runs but is not ready (its readiness probe fails)", st.Name)
		}
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// WaitReady waits until every Deployment of the release is ready, reporting
// progress through o.Progress, until ctx ends (or o.Timeout passes, when
// set); the error says what is still not ready.
func WaitReady(ctx context.Context, o Options) error {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	var last Readiness
	for {
		r, err := CheckReadiness(ctx, o.Client, o.Namespace, o.ReleaseName)
		if err == nil {
			if r.Done() {
				return nil
			}
			last = r
			if o.Progress != nil {
				o.Progress(r.String())
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not ready: %s", last)
		case <-tick.C:
		}
	}
}
