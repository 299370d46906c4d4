// Package balancetest builds what the tests of Ballast's balance plugins
// share: nodes and ReplicaSet pods of known sizes, a usage source the test
// sets, and load tables.
package balancetest

import (
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// MiB is a mebibyte.
const MiB = 1 << 20

// Created is the creation time of every test pod.
var Created = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Node returns a ready node with 4 CPUs and 1000 MiB, so 10 MiB of memory
// is 1 %, after apply.
func Node(name string, apply ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{
			Allocatable: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("4"),
				v1.ResourceMemory: *resource.NewQuantity(1000*MiB, resource.BinarySI),
				v1.ResourcePods:   resource.MustParse("110"),
			},
			Conditions: []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue}},
		},
	}
	n.Status.Capacity = n.Status.Allocatable
	for _, a := range apply {
		a(n)
	}
	return n
}

// Pod returns a running pod of ReplicaSet rs in namespace default,
// requesting 100m CPU (2.5 %) and memMiB MiB, placed on nodeName by
// Ballast's scheduler, after apply.
func Pod(name, nodeName, rs string, memMiB int64, apply ...func(*v1.Pod)) *v1.Pod {
	controller := true
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: name, UID: k8stypes.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(Created),
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: k8stypes.UID("rs-" + rs), Controller: &controller,
			}},
		},
		Spec: v1.PodSpec{
			NodeName:      nodeName,
			SchedulerName: "ballast-scheduler",
			Containers: []v1.Container{{Name: "c", Image: "img", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("100m"),
				v1.ResourceMemory: *resource.NewQuantity(memMiB*MiB, resource.BinarySI),
			}}}},
		},
		Status: v1.PodStatus{Phase: v1.PodRunning},
	}
	for _, a := range apply {
		a(p)
	}
	return p
}

// StaticSource serves a snapshot set by the test.
type StaticSource struct {
	mu   sync.Mutex
	snap *usage.Snapshot
	// Peaks are window maxima above the average, per node; a node not in
	// it peaks at its average.
	Peaks map[string]balance.NodeLoad
	// Latest are newest samples other than the average, per node; a node
	// not in it has its average as its newest sample.
	Latest map[string]balance.NodeLoad
}

// Snapshot returns the snapshot last set.
func (s *StaticSource) Snapshot() *usage.Snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.snap
}

// Set publishes usage per node as the 5m window's average and newest
// sample; nodes listed in stale are marked stale.
func (s *StaticSource) Set(at time.Time, loads map[string]balance.NodeLoad, stale ...string) {
	snap := &usage.Snapshot{Time: at, Source: "test", Nodes: map[string]usage.NodeUsage{}}
	for name, l := range loads {
		stats := map[usage.Resource]usage.Stats{}
		for r, v := range l {
			peak := v
			if p, ok := s.Peaks[name][r]; ok {
				peak = p
			}
			latest := v
			if l, ok := s.Latest[name][r]; ok {
				latest = l
			}
			stats[r] = usage.Stats{Avg: v, Latest: latest, Max: max(peak, latest), P95: peak, Samples: 20}
		}
		snap.Nodes[name] = usage.NodeUsage{Node: name, SampleTime: at, Windows: map[usage.Window]map[usage.Resource]usage.Stats{usage.Window5m: stats}}
	}
	for _, name := range stale {
		n := snap.Nodes[name]
		n.Stale = true
		snap.Nodes[name] = n
	}
	s.mu.Lock()
	s.snap = snap
	s.mu.Unlock()
}

// Loads builds a load table from triples: node name, cpu percent, memory
// percent.
func Loads(kv ...any) map[string]balance.NodeLoad {
	out := map[string]balance.NodeLoad{}
	for i := 0; i < len(kv); i += 3 {
		out[kv[i].(string)] = balance.NodeLoad{usage.CPU: float64(kv[i+1].(int)), usage.Memory: float64(kv[i+2].(int))}
	}
	return out
}
