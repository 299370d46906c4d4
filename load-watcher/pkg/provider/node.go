package provider

import corev1 "k8s.io/api/core/v1"

// NodeFromAPI extracts what providers need from a Kubernetes Node.
func NodeFromAPI(n *corev1.Node) Node {
	out := Node{
		Name: n.Name,
		Allocatable: Quantities{
			MilliCPU:    n.Status.Allocatable.Cpu().MilliValue(),
			MemoryBytes: n.Status.Allocatable.Memory().Value(),
		},
		Capacity: Quantities{
			MilliCPU:    n.Status.Capacity.Cpu().MilliValue(),
			MemoryBytes: n.Status.Capacity.Memory().Value(),
		},
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			out.InternalIP = a.Address
			break
		}
	}
	return out
}
