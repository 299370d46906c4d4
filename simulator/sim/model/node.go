package model

import (
	"k8s.io/apimachinery/pkg/labels"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/simulator/scenario"
)

// NodeSpec is the in-process cluster's node for a scenario node: its size,
// arch, role as a node-role label, and labels.
func NodeSpec(n scenario.Node) cluster.NodeSpec {
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	if n.Role != "" {
		labels["node-role.kubernetes.io/"+n.Role] = "true"
	}
	return cluster.NodeSpec{
		Name: n.Name, CPU: n.CPU.String(), Memory: n.Memory.String(), Pods: n.Pods, Arch: n.Arch,
		Labels: labels, Unschedulable: n.Unschedulable,
	}
}

// Hosts reports whether w's pods may run on n by its node selector: where a
// DaemonSet puts one, and where the oracle may place a Deployment's.
func Hosts(n scenario.Node, w scenario.Workload) bool {
	return labels.SelectorFromSet(w.NodeSelector).Matches(labels.Set(NodeSpec(n).NodeLabels()))
}
