// Package objects builds the Kubernetes objects that Ballast's tests, lanes
// and simulator create, the way kube-scheduler's testing wrappers do:
// MakeDeployment("web").Replicas(3).Requests("100m", "64Mi").Obj().
package objects

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// DefaultImage is the image a built Deployment runs unless Image says
// otherwise: nothing pulls it in an in-process cluster.
const DefaultImage = "registry.invalid/app:1"

// DeploymentWrapper builds a Deployment.
type DeploymentWrapper struct{ appsv1.Deployment }

// MakeDeployment starts a Deployment named name in namespace "default": one
// replica, pods labelled app=name and selected by that label, one container
// "app" running DefaultImage.
func MakeDeployment(name string) *DeploymentWrapper {
	labels := map[string]string{"app": name}
	return &DeploymentWrapper{appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: copyLabels(labels)},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: DefaultImage}}},
			},
		},
	}}
}

// Obj returns the Deployment built.
func (d *DeploymentWrapper) Obj() *appsv1.Deployment { return d.Deployment.DeepCopy() }

// Namespace sets the namespace.
func (d *DeploymentWrapper) Namespace(ns string) *DeploymentWrapper {
	d.Deployment.Namespace = ns
	return d
}

// Replicas sets the number of replicas.
func (d *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper {
	d.Spec.Replicas = ptr.To(n)
	return d
}

// Label adds a label to the Deployment, its selector and its pods.
func (d *DeploymentWrapper) Label(key, value string) *DeploymentWrapper {
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	d.Labels[key] = value
	d.Spec.Selector.MatchLabels[key] = value
	d.Spec.Template.Labels[key] = value
	return d
}

// SchedulerName sets the pods' scheduler; empty is the default scheduler.
func (d *DeploymentWrapper) SchedulerName(name string) *DeploymentWrapper {
	d.Spec.Template.Spec.SchedulerName = name
	return d
}

// Container renames the pods' container.
func (d *DeploymentWrapper) Container(name string) *DeploymentWrapper {
	d.container().Name = name
	return d
}

// Image sets the container's image and pull policy (empty: the default).
func (d *DeploymentWrapper) Image(image string, pull corev1.PullPolicy) *DeploymentWrapper {
	c := d.container()
	c.Image, c.ImagePullPolicy = image, pull
	return d
}

// Requests sets the container's cpu and memory requests; an empty string
// requests none of that resource.
func (d *DeploymentWrapper) Requests(cpu, memory string) *DeploymentWrapper {
	d.container().Resources.Requests = resourceList(cpu, memory)
	return d
}

// Limits sets the container's cpu and memory limits; an empty string sets
// none for that resource.
func (d *DeploymentWrapper) Limits(cpu, memory string) *DeploymentWrapper {
	d.container().Resources.Limits = resourceList(cpu, memory)
	return d
}

// Resources sets the container's requests and limits as given.
func (d *DeploymentWrapper) Resources(r corev1.ResourceRequirements) *DeploymentWrapper {
	d.container().Resources = r
	return d
}

// NodeSelector sets the pods' node selector.
func (d *DeploymentWrapper) NodeSelector(selector map[string]string) *DeploymentWrapper {
	d.Spec.Template.Spec.NodeSelector = selector
	return d
}

// GracePeriod sets the pods' termination grace period.
func (d *DeploymentWrapper) GracePeriod(seconds int64) *DeploymentWrapper {
	d.Spec.Template.Spec.TerminationGracePeriodSeconds = ptr.To(seconds)
	return d
}

// SecurityContext sets the container's security context.
func (d *DeploymentWrapper) SecurityContext(sc *corev1.SecurityContext) *DeploymentWrapper {
	d.container().SecurityContext = sc
	return d
}

func (d *DeploymentWrapper) container() *corev1.Container { return &d.Spec.Template.Spec.Containers[0] }

func resourceList(cpu, memory string) corev1.ResourceList {
	list := corev1.ResourceList{}
	if cpu != "" {
		list[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		list[corev1.ResourceMemory] = resource.MustParse(memory)
	}
	return list
}

func copyLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[k] = v
	}
	return out
}
