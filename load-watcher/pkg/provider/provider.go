package provider

import (
	"context"
	"time"
)

// Node is what a provider needs to know about a cluster node to find and
// scale its samples.
type Node struct {
	// Name is the Kubernetes node name.
	Name string
	// InternalIP is the node's InternalIP address, empty when unknown; the
	// Prometheus provider matches `instance` hosts against it.
	InternalIP string
	// Allocatable is what the scheduler may hand out on the node.
	Allocatable Quantities
	// Capacity is the node's total hardware.
	Capacity Quantities
}

// Quantities holds a node's CPU and memory amounts; zero means unknown.
type Quantities struct {
	// MilliCPU is CPU in thousandths of a core.
	MilliCPU int64
	// MemoryBytes is memory in bytes.
	MemoryBytes int64
}

// Sample is one measurement of one node, in percent of the node's
// allocatable. The values are raw: the collector passes them through
// Sanitize before keeping them.
type Sample struct {
	// Node is the Kubernetes node name.
	Node string
	// Time is when the source took the measurement.
	Time time.Time
	// CPU is CPU usage in percent of allocatable CPU; valid when HasCPU.
	CPU float64
	// Memory is memory usage in percent of allocatable memory; valid when HasMemory.
	Memory float64
	// HasCPU is false when the source did not report CPU for the node.
	HasCPU bool
	// HasMemory is false when the source did not report memory for the node.
	HasMemory bool
}

// Provider reads the current usage of cluster nodes from one source.
type Provider interface {
	// Name identifies the source ("metrics-server", "prometheus", "static").
	Name() string
	// Sample returns the newest usage of the given nodes. Nodes the source
	// knows nothing about are left out, never reported as 0 %. A partial
	// answer comes with both samples and an error.
	Sample(ctx context.Context, nodes []Node) ([]Sample, error)
}
