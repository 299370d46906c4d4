package balance

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// SurgeAnnotation is the pod-template annotation a surge move sets on a
// Deployment, to the move's time, as `kubectl rollout restart` sets
// kubectl.kubernetes.io/restartedAt: the Deployment rolls its one pod
// out, starting the replacement before stopping the pod.
const SurgeAnnotation = "ballast-sched.io/moved-at"

// SurgeTarget returns the Deployment whose one pod is pod when moving it by
// a rollout keeps a Ready pod throughout: one replica, a RollingUpdate
// strategy that adds a pod before removing one (maxSurge at least 1,
// maxUnavailable 0 for one replica, as the defaults of 25 % each are), not
// paused, no rollout under way, and no volume claim (a ReadWriteOnce volume
// cannot be attached to the replacement while the pod holds it). Otherwise
// it returns nil and why not, and the pod is moved by eviction as any other.
//
// The Deployment is the one that controls the pod's ReplicaSet, each found
// by its controller's owner reference, name and UID: never one that only
// bears the name a ReplicaSet's name begins with, nor one created again
// under the same name since the pod was.
func SurgeTarget(ctx context.Context, client kubernetes.Interface, pod *v1.Pod) (*appsv1.Deployment, string, error) {
	rsRef := metav1.GetControllerOf(pod)
	if !isApps(rsRef, "ReplicaSet") {
		return nil, "not a Deployment's pod", nil
	}
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil || vol.Ephemeral != nil {
			return nil, "it mounts a volume claim, which its replacement could not attach while it runs", nil
		}
	}
	rs, err := client.AppsV1().ReplicaSets(pod.Namespace).Get(ctx, rsRef.Name, metav1.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("reading ReplicaSet %s/%s: %w", pod.Namespace, rsRef.Name, err)
	}
	if rs.UID != rsRef.UID {
		return nil, fmt.Sprintf("ReplicaSet %s is not the one that created the pod", rs.Name), nil
	}
	dRef := metav1.GetControllerOf(rs)
	if !isApps(dRef, "Deployment") {
		return nil, "not a Deployment's pod", nil
	}
	d, err := client.AppsV1().Deployments(pod.Namespace).Get(ctx, dRef.Name, metav1.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("reading Deployment %s/%s: %w", pod.Namespace, dRef.Name, err)
	}
	if d.UID != dRef.UID {
		return nil, fmt.Sprintf("Deployment %s is not the one that controls the pod's ReplicaSet", d.Name), nil
	}
	if why := surgeable(d); why != "" {
		return nil, why, nil
	}
	return d, "", nil
}

// isApps reports whether ref is a controller reference to an apps object of
// kind.
func isApps(ref *metav1.OwnerReference, kind string) bool {
	if ref == nil || ref.Kind != kind || ref.UID == "" {
		return false
	}
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	return err == nil && gv.Group == appsv1.GroupName
}

// surgeable says why a rollout of d would not keep a Ready pod throughout,
// or is not d's to make now; empty when it would.
func surgeable(d *appsv1.Deployment) string {
	replicas := int32(1)
	if d.Spec.Replicas != nil {
		replicas = *d.Spec.Replicas
	}
	switch {
	case replicas != 1:
		return fmt.Sprintf("%d replicas", replicas)
	case d.Spec.Paused:
		return "the Deployment is paused"
	case d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType:
		return "its strategy is Recreate"
	case d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas != replicas || d.Status.Replicas != replicas ||
		d.Status.AvailableReplicas != replicas:
		return "a rollout is under way"
	}
	surge, unavailable := intstr.FromString("25%"), intstr.FromString("25%")
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		if ru.MaxSurge != nil {
			surge = *ru.MaxSurge
		}
		if ru.MaxUnavailable != nil {
			unavailable = *ru.MaxUnavailable
		}
	}
	// As the Deployment controller resolves them: surge rounded up,
	// unavailable down.
	s, err := intstr.GetScaledValueFromIntOrPercent(&surge, int(replicas), true)
	if err != nil {
		return "its maxSurge is invalid"
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(&unavailable, int(replicas), false)
	if err != nil {
		return "its maxUnavailable is invalid"
	}
	if s < 1 || u > 0 {
		return fmt.Sprintf("its rolling update removes the pod before its replacement is Ready (maxSurge %s, maxUnavailable %s)",
			surge.String(), unavailable.String())
	}
	return ""
}

// Surge rolls d out by setting SurgeAnnotation on its pod template to at:
// the Deployment controller starts a replacement, which the scheduler
// places, and stops the old pod once the replacement is Ready. A patch
// that finds the Deployment changed since it was read (another rollout)
// fails rather than start one on top of it.
func Surge(ctx context.Context, client kubernetes.Interface, d *appsv1.Deployment, at time.Time) error {
	patch := map[string]any{
		"metadata": map[string]any{"resourceVersion": d.ResourceVersion},
		"spec": map[string]any{"template": map[string]any{"metadata": map[string]any{
			"annotations": map[string]string{SurgeAnnotation: at.UTC().Format(time.RFC3339)},
		}}},
	}
	data, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if _, err := client.AppsV1().Deployments(d.Namespace).Patch(ctx, d.Name, types.StrategicMergePatchType, data, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("rolling out Deployment %s/%s: %w", d.Namespace, d.Name, err)
	}
	return nil
}
