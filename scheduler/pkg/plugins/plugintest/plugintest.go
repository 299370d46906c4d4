// Package plugintest builds what tests of the Ballast plugins need (here and
// in modules that check other components against them): a real
// scheduler framework over a snapshot of nodes and pods, nodes and pods with
// resources, and a static usage source.
package plugintest

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	tf "k8s.io/kubernetes/pkg/scheduler/testing/framework"

	"github.com/ballast-sched/ballast/core/usage"
)

// Source is a usage source returning a fixed snapshot.
type Source struct{ Snap *usage.Snapshot }

// Snapshot returns the fixed snapshot.
func (s *Source) Snapshot() *usage.Snapshot { return s.Snap }

// NodeStats are the statistics of one node in percent: Avg, Std and P95 of
// cpu and memory.
type NodeStats struct {
	CPU, Memory, CPUStd, MemoryStd, CPUP95, MemoryP95 float64
	// CPULatest and MemoryLatest are the newest samples; zero means equal
	// to the mean.
	CPULatest, MemoryLatest float64
	Stale                   bool
}

func orMean(latest, mean float64) float64 {
	if latest == 0 {
		return mean
	}
	return latest
}

// Snapshot builds a snapshot sampled at sampleTime with the same statistics
// in every window.
func Snapshot(sampleTime time.Time, nodes map[string]NodeStats) *usage.Snapshot {
	snap := &usage.Snapshot{Time: sampleTime, Source: "test", Nodes: map[string]usage.NodeUsage{}}
	for name, s := range nodes {
		cpu := usage.Stats{Avg: s.CPU, Std: s.CPUStd, P95: max(s.CPUP95, s.CPU), Max: max(s.CPUP95, s.CPU, s.CPULatest), Latest: orMean(s.CPULatest, s.CPU), Samples: 10}
		mem := usage.Stats{Avg: s.Memory, Std: s.MemoryStd, P95: max(s.MemoryP95, s.Memory), Max: max(s.MemoryP95, s.Memory, s.MemoryLatest), Latest: orMean(s.MemoryLatest, s.Memory), Samples: 10}
		w := map[usage.Window]map[usage.Resource]usage.Stats{}
		for _, win := range usage.DefaultWindows {
			w[win] = map[usage.Resource]usage.Stats{usage.CPU: cpu, usage.Memory: mem}
		}
		snap.Nodes[name] = usage.NodeUsage{Node: name, SampleTime: sampleTime, Stale: s.Stale, Windows: w}
	}
	return snap
}

// Node returns a ready node with cpu, memory and pod capacity.
func Node(name, cpu, memory string, pods int64) *v1.Node {
	list := v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(cpu),
		v1.ResourceMemory: resource.MustParse(memory),
		v1.ResourcePods:   *resource.NewQuantity(pods, resource.DecimalSI),
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Capacity: list, Allocatable: list}}
}

// Pod returns a pod with one container requesting cpu and memory (empty: no
// request), on node when node is not empty.
func Pod(name, node, cpu, memory string) *v1.Pod {
	req := v1.ResourceList{}
	if cpu != "" {
		req[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if memory != "" {
		req[v1.ResourceMemory] = resource.MustParse(memory)
	}
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)},
		Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{
			Name: "app", Resources: v1.ResourceRequirements{Requests: req},
		}}},
	}
}

// Framework is a real scheduler framework running one plugin.
type Framework struct {
	framework.Framework
	Recorder *events.FakeRecorder
	Nodes    []fwk.NodeInfo
	// Client is the plugins' client (fwk.Handle.ClientSet), a fake one.
	Client *fake.Clientset
}

// NewFramework runs the plugin built by newPlugin at the given extension
// points, over a snapshot of nodes and pods.
func NewFramework(t testing.TB, name string, newPlugin frameworkruntime.PluginFactory, extensions []string,
	nodes []*v1.Node, pods []*v1.Pod) *Framework {
	t.Helper()
	return NewFrameworkOf(t, []Plugin{{Name: name, New: newPlugin, Extensions: extensions, Weight: 1}}, nodes, pods)
}

// Plugin is one plugin of a framework: its name, factory, the extension
// points it runs at and its score weight.
type Plugin struct {
	Name       string
	New        frameworkruntime.PluginFactory
	Extensions []string
	Weight     int32
}

// NewFrameworkOf runs plugins, in their order, over a snapshot of nodes and
// pods: a profile of several plugins, as a benchmark of a shipped profile's
// plugins needs.
func NewFrameworkOf(t testing.TB, plugins []Plugin, nodes []*v1.Node, pods []*v1.Pod) *Framework {
	t.Helper()
	schedmetrics.Register() // the framework records into the scheduler's metrics
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	snapshot := cache.NewSnapshot(pods, nodes)
	rec := events.NewFakeRecorder(100)
	register := []tf.RegisterPluginFunc{
		tf.RegisterQueueSortPlugin("PrioritySort", func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
			return queueSort{}, nil
		}),
		tf.RegisterBindPlugin("Bind", func(context.Context, runtime.Object, fwk.Handle) (fwk.Plugin, error) {
			return binder{}, nil
		}),
	}
	for _, p := range plugins {
		register = append(register, tf.RegisterPluginAsExtensionsWithWeight(p.Name, p.Weight, p.New, p.Extensions...))
	}
	client := fake.NewClientset()
	fw, err := tf.NewFramework(ctx, register, "test",
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(informers.NewSharedInformerFactory(client, 0)),
		frameworkruntime.WithEventRecorder(rec))
	if err != nil {
		t.Fatalf("creating framework with %+v: %v", plugins, err)
	}
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		t.Fatal(err)
	}
	return &Framework{Framework: fw, Recorder: rec, Nodes: infos, Client: client}
}

// Signature returns the framework's signature of pod, which kube-scheduler
// compares between consecutive pods to reuse one scheduling result for the
// next (opportunistic batching). The test fails when there is none: one
// filter or score plugin without fwk.SignPlugin, or one that refuses the
// pod, turns batching off.
func (f *Framework) Signature(t testing.TB, pod *v1.Pod) string {
	t.Helper()
	sig := f.SignPod(context.Background(), pod)
	if sig == nil {
		t.Fatalf("the framework does not sign pod %s: opportunistic batching is off", pod.Name)
	}
	return string(sig)
}

// NodeInfo returns the snapshot's NodeInfo of a node.
func (f *Framework) NodeInfo(t testing.TB, name string) fwk.NodeInfo {
	t.Helper()
	for _, n := range f.Nodes {
		if n.Node().Name == name {
			return n
		}
	}
	t.Fatalf("no node %q in the snapshot", name)
	return nil
}

// Scores runs PreScore and Score for pod on every node and returns each
// node's score from the plugin.
func (f *Framework) Scores(t testing.TB, state fwk.CycleState, pod *v1.Pod) map[string]int64 {
	t.Helper()
	return f.ScoresOn(t, state, pod, f.Nodes)
}

// ScoresOn is Scores over nodes alone: those a filter let through.
func (f *Framework) ScoresOn(t testing.TB, state fwk.CycleState, pod *v1.Pod, nodes []fwk.NodeInfo) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	if st := f.RunPreScorePlugins(ctx, state, pod, nodes); !st.IsSuccess() && !st.IsSkip() {
		t.Fatalf("PreScore: %v", st)
	}
	scores, st := f.RunScorePlugins(ctx, state, pod, nodes)
	if !st.IsSuccess() {
		t.Fatalf("Score: %v", st)
	}
	out := map[string]int64{}
	for _, s := range scores {
		out[s.Name] = s.TotalScore
	}
	return out
}

// Events drains the events recorded so far.
func (f *Framework) Events() []string {
	var out []string
	for {
		select {
		case e := <-f.Recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

type queueSort struct{}

func (queueSort) Name() string                     { return "PrioritySort" }
func (queueSort) Less(a, b fwk.QueuedPodInfo) bool { return a.GetTimestamp().Before(b.GetTimestamp()) }

type binder struct{}

func (binder) Name() string { return "Bind" }
func (binder) Bind(context.Context, fwk.CycleState, *v1.Pod, string) *fwk.Status {
	return fwk.NewStatus(fwk.Error, "binding is not tested here")
}
