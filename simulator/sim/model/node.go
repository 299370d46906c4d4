package model

import (
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
