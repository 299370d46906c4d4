// Package demo runs a small homelab on the in-process cluster and shows where
// the scheduler put a Deployment's pods.
package demo

import (
	"context"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/simulator/cluster"
)

// Homelab is the demo's cluster: one mini-PC and two Raspberry Pis.
var Homelab = []cluster.NodeSpec{
	{Name: "mini-pc", CPU: "8", Memory: "16Gi", Arch: "amd64"},
	{Name: "pi-1", CPU: "4", Memory: "4Gi", Arch: "arm64"},
	{Name: "pi-2", CPU: "4", Memory: "4Gi", Arch: "arm64"},
}

const (
	workloadName     = "web"
	workloadReplicas = 9
	settleTimeout    = 2 * time.Minute
)

// Run starts the cluster, schedules the demo Deployment with the default
// kube-scheduler and writes the per-node placement table to out.
func Run(ctx context.Context, out io.Writer) error {
	host := cluster.NewStandalone()
	defer host.Close()
	c, err := cluster.Start(host, cluster.Options{})
	if err != nil {
		return err
	}
	for _, spec := range Homelab {
		if _, err := c.AddNode(ctx, spec); err != nil {
			return err
		}
	}
	if _, err := c.StartScheduler(ctx, cluster.DefaultSchedulerConfig); err != nil {
		return err
	}
	if _, err := c.Client.AppsV1().Deployments("default").Create(ctx, webDeployment(), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the demo deployment: %w", err)
	}
	if err := waitForRollout(ctx, c); err != nil {
		return err
	}
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	fmt.Fprintf(out, "Deployment %q (%d replicas, 250m CPU / 256Mi each) placed by the default kube-scheduler:\n\n",
		workloadName, workloadReplicas)
	return WriteTable(out, Placement(nodes.Items, pods.Items))
}

// NodePlacement is what the scheduler put on one node.
type NodePlacement struct {
	Node                   string
	Arch                   string
	Pods                   int
	CPURequested, CPUAlloc resource.Quantity
	MemRequested, MemAlloc resource.Quantity
}

// Placement sums the requests of the running, bound pods on each node.
func Placement(nodes []corev1.Node, pods []corev1.Pod) []NodePlacement {
	byNode := map[string]*NodePlacement{}
	for _, n := range nodes {
		byNode[n.Name] = &NodePlacement{
			Node:     n.Name,
			Arch:     n.Labels[cluster.LabelArch],
			CPUAlloc: n.Status.Allocatable[corev1.ResourceCPU],
			MemAlloc: n.Status.Allocatable[corev1.ResourceMemory],
		}
	}
	for _, pod := range pods {
		p, ok := byNode[pod.Spec.NodeName]
		if !ok || pod.DeletionTimestamp != nil || pod.Status.Phase != corev1.PodRunning {
			continue
		}
		p.Pods++
		for _, ctr := range pod.Spec.Containers {
			p.CPURequested.Add(ctr.Resources.Requests[corev1.ResourceCPU])
			p.MemRequested.Add(ctr.Resources.Requests[corev1.ResourceMemory])
		}
	}
	out := make([]NodePlacement, 0, len(byNode))
	for _, p := range byNode {
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// WriteTable prints one row per node: pods, requested and allocatable CPU
// and memory, and the requested share of each.
func WriteTable(out io.Writer, rows []NodePlacement) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tARCH\tPODS\tCPU REQ/ALLOC\tCPU %\tMEM REQ/ALLOC\tMEM %")
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s/%s\t%.0f%%\t%s/%s\t%.0f%%\n", r.Node, r.Arch, r.Pods,
			r.CPURequested.String(), r.CPUAlloc.String(), percent(r.CPURequested, r.CPUAlloc),
			r.MemRequested.String(), r.MemAlloc.String(), percent(r.MemRequested, r.MemAlloc))
	}
	return w.Flush()
}

func percent(part, whole resource.Quantity) float64 {
	if whole.IsZero() {
		return 0
	}
	return 100 * float64(part.MilliValue()) / float64(whole.MilliValue())
}

func webDeployment() *appsv1.Deployment {
	labels := map[string]string{"app": workloadName}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: workloadName, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](workloadReplicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  "web",
					Image: "nginx:1.27",
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
						corev1.ResourceCPU:    resource.MustParse("250m"),
						corev1.ResourceMemory: resource.MustParse("256Mi"),
					}},
				}}},
			},
		},
	}
}

func waitForRollout(ctx context.Context, c *cluster.Cluster) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, settleTimeout, true, func(ctx context.Context) (bool, error) {
		d, err := c.Client.AppsV1().Deployments("default").Get(ctx, workloadName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return d.Status.ReadyReplicas == workloadReplicas, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %d ready replicas of %q: %w", workloadReplicas, workloadName, err)
	}
	return nil
}
