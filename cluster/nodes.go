package cluster

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
)

// Well-known node labels a simulated node carries.
const (
	LabelHostname     = "kubernetes.io/hostname"
	LabelArch         = "kubernetes.io/arch"
	LabelOS           = "kubernetes.io/os"
	LabelInstanceType = "node.kubernetes.io/instance-type"
)

// KubeletVersion is the version simulated nodes report, the Kubernetes line
// Ballast is built on, in k3s's spelling.
const KubeletVersion = "v1.36.3+k3s1"

// NodeSpec describes a simulated node.
type NodeSpec struct {
	// Name is the node name; required.
	Name string
	// CPU is the allocatable CPU as a quantity ("4", "3500m"); default "4".
	CPU string
	// Memory is the allocatable memory as a quantity ("8Gi"); default "8Gi".
	Memory string
	// Pods is the allocatable pod count; default 110.
	Pods int64
	// Arch is the kubernetes.io/arch label; default "amd64".
	Arch string
	// Labels are added to the well-known ones (hostname, arch, os,
	// instance-type "k3s").
	Labels map[string]string
	// Annotations are set on the node, such as the arguments k3s records
	// on each node it starts.
	Annotations map[string]string
	// Taints are set on the node.
	Taints []corev1.Taint
	// Unschedulable creates the node cordoned.
	Unschedulable bool
}

// WithDefaults is the spec with what it leaves out filled in: 4 CPU, 8Gi,
// 110 pods, amd64.
func (s NodeSpec) WithDefaults() NodeSpec {
	if s.CPU == "" {
		s.CPU = "4"
	}
	if s.Memory == "" {
		s.Memory = "8Gi"
	}
	if s.Pods == 0 {
		s.Pods = 110
	}
	if s.Arch == "" {
		s.Arch = "amd64"
	}
	return s
}

// AddNode registers a Ready node and hands it to the kubelet stand-in, which
// then runs the pods bound to it and renews its heartbeat.
func (c *Cluster) AddNode(ctx context.Context, spec NodeSpec) (*corev1.Node, error) {
	return addNode(ctx, c.Client, c.kubelet, spec)
}

// StandIn runs nodes that have no machine on any cluster, as the
// simulator's nodes are run: it registers each Ready, renews its heartbeat
// (Lease and Ready condition) and takes the pods bound to it to Running and
// Ready with a pod IP, without running a container. Pods of other nodes are
// left to their kubelets. The real-node lane adds such nodes next to its
// real ones for load that must not cost containers.
type StandIn struct {
	client kubernetes.Interface
	k      *kubelet
}

// StartStandIn starts a kubelet stand-in on client; it runs until ctx ends.
func StartStandIn(ctx context.Context, client kubernetes.Interface) *StandIn {
	s := &StandIn{client: client, k: newKubelet(client, nil)}
	go s.k.run(ctx)
	return s
}

// AddNode registers a Ready node run by the stand-in.
func (s *StandIn) AddNode(ctx context.Context, spec NodeSpec) (*corev1.Node, error) {
	return addNode(ctx, s.client, s.k, spec)
}

// NodeLabels are the labels of the node spec describes: the well-known ones
// (hostname, arch, os, instance-type "k3s") and its own.
func (spec NodeSpec) NodeLabels() map[string]string {
	spec = spec.WithDefaults()
	labels := map[string]string{
		LabelHostname:     spec.Name,
		LabelArch:         spec.Arch,
		LabelOS:           "linux",
		LabelInstanceType: "k3s",
	}
	for k, v := range spec.Labels {
		labels[k] = v
	}
	return labels
}

func addNode(ctx context.Context, client kubernetes.Interface, k *kubelet, spec NodeSpec) (*corev1.Node, error) {
	if spec.Name == "" {
		return nil, fmt.Errorf("adding a node: name is required")
	}
	spec = spec.WithDefaults()
	allocatable := corev1.ResourceList{}
	for name, value := range map[corev1.ResourceName]string{
		corev1.ResourceCPU:              spec.CPU,
		corev1.ResourceMemory:           spec.Memory,
		corev1.ResourceEphemeralStorage: "100Gi",
	} {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return nil, fmt.Errorf("adding node %s: %s %q: %w", spec.Name, name, value, err)
		}
		allocatable[name] = q
	}
	allocatable[corev1.ResourcePods] = *resource.NewQuantity(spec.Pods, resource.DecimalSI)

	index := k.register(spec.Name)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: spec.Name, Labels: spec.NodeLabels(), Annotations: spec.Annotations},
		Spec: corev1.NodeSpec{
			PodCIDR:       podCIDR(index),
			PodCIDRs:      []string{podCIDR(index)},
			Taints:        spec.Taints,
			Unschedulable: spec.Unschedulable,
		},
	}
	created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		k.unregister(spec.Name)
		return nil, fmt.Errorf("creating node %s: %w", spec.Name, err)
	}
	status := corev1.NodeStatus{
		Capacity:    allocatable,
		Allocatable: allocatable,
		Phase:       corev1.NodeRunning,
		Conditions:  nodeConditions(metav1.Now()),
		Addresses: []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: nodeIP(index)},
			{Type: corev1.NodeHostName, Address: spec.Name},
		},
		NodeInfo: corev1.NodeSystemInfo{
			Architecture:            spec.Arch,
			OperatingSystem:         "linux",
			KubeletVersion:          KubeletVersion,
			ContainerRuntimeVersion: "containerd://2.0.0-k3s",
			OSImage:                 "Ballast simulated node",
		},
	}
	// On a cluster with a node lifecycle controller the node may change
	// between create and status update: set the status on the newest copy.
	updated := created
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		updated.Status = status
		var err error
		if updated, err = client.CoreV1().Nodes().UpdateStatus(ctx, updated, metav1.UpdateOptions{}); err == nil {
			return nil
		}
		latest, getErr := client.CoreV1().Nodes().Get(ctx, spec.Name, metav1.GetOptions{})
		if getErr != nil {
			return getErr
		}
		updated = latest
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("setting status of node %s: %w", spec.Name, err)
	}
	return updated, nil
}

// RemoveNode deletes a node and, as the pod garbage collector would, the pods
// bound to it, so their controllers recreate them elsewhere.
func (c *Cluster) RemoveNode(ctx context.Context, name string) error {
	c.kubelet.unregister(name)
	if err := c.Client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("deleting node %s: %w", name, err)
	}
	pods, err := c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{
		FieldSelector: "spec.nodeName=" + name,
	})
	if err != nil {
		return fmt.Errorf("listing pods of node %s: %w", name, err)
	}
	for _, pod := range pods.Items {
		err := c.Client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, *metav1.NewDeleteOptions(0))
		if err != nil && !isNotFound(err) {
			return fmt.Errorf("deleting pod %s/%s of removed node %s: %w", pod.Namespace, pod.Name, name, err)
		}
	}
	return nil
}

// SetUnschedulable cordons (true) or uncordons (false) a node.
func (c *Cluster) SetUnschedulable(ctx context.Context, name string, unschedulable bool) error {
	return SetUnschedulable(ctx, c.Client, name, unschedulable)
}

// SetUnschedulable cordons (true) or uncordons (false) a node of any
// cluster client reaches, as kubectl cordon does.
func SetUnschedulable(ctx context.Context, client kubernetes.Interface, name string, unschedulable bool) error {
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, unschedulable)
	if _, err := client.CoreV1().Nodes().Patch(ctx, name, types.StrategicMergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("setting unschedulable=%t on node %s: %w", unschedulable, name, err)
	}
	return nil
}

// SetReachable makes a node stop (false) or resume (true) reporting, as
// when its machine goes down and comes back: the kubelet stand-in stops
// its heartbeats and starts nothing there, its Ready condition turns
// Unknown, and it is tainted node.kubernetes.io/unreachable NoSchedule and
// NoExecute, as the node lifecycle controller does (which the in-process
// cluster does not run); back, the condition is True and the taints gone.
// Evicting the pods that do not tolerate the taint is the caller's.
func (c *Cluster) SetReachable(ctx context.Context, name string, reachable bool, now metav1.Time) error {
	c.kubelet.setDown(name, !reachable)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := c.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		var taints []corev1.Taint
		for _, t := range node.Spec.Taints {
			if t.Key != corev1.TaintNodeUnreachable {
				taints = append(taints, t)
			}
		}
		if !reachable {
			taints = append(taints,
				corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now},
				corev1.Taint{Key: corev1.TaintNodeUnreachable, Effect: corev1.TaintEffectNoExecute, TimeAdded: &now})
		}
		node.Spec.Taints = taints
		if node, err = c.Client.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{}); err != nil {
			return err
		}
		for i := range node.Status.Conditions {
			cond := &node.Status.Conditions[i]
			if cond.Type != corev1.NodeReady {
				continue
			}
			cond.Status, cond.Reason, cond.LastTransitionTime = corev1.ConditionTrue, "KubeletReady", now
			if !reachable {
				cond.Status, cond.Reason = corev1.ConditionUnknown, "NodeStatusUnknown"
			}
		}
		_, err = c.Client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
		return err
	})
}

func nodeConditions(now metav1.Time) []corev1.NodeCondition {
	condition := func(t corev1.NodeConditionType, status corev1.ConditionStatus, reason string) corev1.NodeCondition {
		return corev1.NodeCondition{Type: t, Status: status, Reason: reason, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	return []corev1.NodeCondition{
		condition(corev1.NodeReady, corev1.ConditionTrue, "KubeletReady"),
		condition(corev1.NodeMemoryPressure, corev1.ConditionFalse, "KubeletHasSufficientMemory"),
		condition(corev1.NodeDiskPressure, corev1.ConditionFalse, "KubeletHasNoDiskPressure"),
		condition(corev1.NodePIDPressure, corev1.ConditionFalse, "KubeletHasSufficientPID"),
	}
}

// Simulated addresses: node i has InternalIP 10.0.(i/250).(i%250+1) and pod
// CIDR 10.(100+i/256).(i%256).0/24, so tens of thousands of nodes never overlap.
func nodeIP(i int) string { return fmt.Sprintf("10.0.%d.%d", i/250, i%250+1) }

func podCIDR(i int) string { return fmt.Sprintf("10.%d.%d.0/24", 100+i/256, i%256) }
