// Package explain says where ballast-scheduler would place a pod now and
// why, node by node: it runs the profile that places the pod, with
// kube-scheduler's in-tree plugins and Ballast's, built from the scheduler's
// configuration as the scheduler builds them, on the cluster as it is now
// and the usage load-watcher serves now. `ballast explain pod` prints it.
package explain

import (
	"context"
	"fmt"
	"sort"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
)

// Input is what Explain needs: the scheduler's configuration, the
// cluster, the usage load-watcher serves now and the pod.
type Input struct {
	// Config is the KubeSchedulerConfiguration the scheduler runs with
	// (its ConfigMap's config.yaml).
	Config []byte
	// Client lists what the scheduler's plugins read (nodes, pods, volumes,
	// namespaces), once; RestConfig is its configuration (pod metrics are
	// read with it).
	Client     kubernetes.Interface
	RestConfig *rest.Config
	// Usage is load-watcher's snapshot.
	Usage *usage.Snapshot
	// Pod is the pod to place.
	Pod *v1.Pod
	// Now is the time the figures are judged at; time.Now when zero.
	Now time.Time
}

// Explanation says where the scheduler would place a pod now and why, node
// by node: the filter that rejects a node with its reasons, LoadAware's
// figures, and each score plugin's score.
type Explanation struct {
	// Profile is the scheduler profile that places the pod (its
	// schedulerName); empty when no profile of the configuration does, and
	// OtherScheduler then says so.
	Profile        string `json:"profile,omitempty"`
	OtherScheduler bool   `json:"otherScheduler,omitempty"`
	// Best are the feasible nodes with the highest total score: the
	// scheduler picks one of them.
	Best []string `json:"best,omitempty"`
	// PreFilter is the reason every node is rejected before the per-node
	// filters run, if one is.
	PreFilter *Verdict `json:"preFilter,omitempty"`
	// Nodes are every node of the cluster, the best first.
	Nodes []NodeExplanation `json:"nodes"`
}

// Verdict is a plugin's rejection: which plugin and why.
type Verdict struct {
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
}

// NodeExplanation is one node's part in the placement.
type NodeExplanation struct {
	Name string `json:"name"`
	// Feasible is true when every filter passes the node.
	Feasible bool `json:"feasible"`
	// Rejected is the first filter that rejects the node, as the
	// scheduler reports it; nil when feasible.
	Rejected *Verdict `json:"rejected,omitempty"`
	// Load is LoadAware's view of the node, when the profile runs it.
	Load *loadaware.NodeReport `json:"load,omitempty"`
	// Scores are the weighted scores of each score plugin, for feasible
	// nodes; Total their sum.
	Scores []PluginScore `json:"scores,omitempty"`
	Total  int64         `json:"total,omitempty"`
}

// PluginScore is one score plugin's score of a node, weighted.
type PluginScore struct {
	Plugin string `json:"plugin"`
	Score  int64  `json:"score"`
}

// Explain runs the profile of in.Config that places in.Pod — kube-scheduler's
// framework and the same plugins as the scheduler, on the cluster as it is
// now and the usage load-watcher serves now — and returns every node's
// verdict: where the pod would go now, and why not elsewhere. A pod already
// bound is placed as if it were not: its own usage stays in its node's
// measured figures.
func Explain(ctx context.Context, in Input) (*Explanation, error) {
	cfg, err := plugins.DecodeConfiguration(in.Config)
	if err != nil {
		return nil, fmt.Errorf("the scheduler's configuration: %w", err)
	}
	var profile *schedconfig.KubeSchedulerProfile
	for i := range cfg.Profiles {
		if cfg.Profiles[i].SchedulerName == schedulerNameOf(in.Pod) {
			profile = &cfg.Profiles[i]
		}
	}
	if profile == nil {
		return &Explanation{OtherScheduler: true}, nil
	}
	if len(in.Pod.Spec.ResourceClaims) > 0 {
		return nil, fmt.Errorf("pod %s/%s requests dynamic resources (resourceClaims), which explain does not evaluate",
			in.Pod.Namespace, in.Pod.Name)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	// LoadAware's own code, on a source that serves in.Usage; the instance
	// is kept to report its figures.
	source := func(context.Context, fwk.Handle) (nodeload.Source, error) { return snapshotSource{in.Usage}, nil }
	registry := plugins.NewRegistry(source, plugins.Options{Now: func() time.Time { return now }})
	var la *loadaware.LoadAware
	if build, ok := registry[loadaware.Name]; ok {
		registry[loadaware.Name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := build(ctx, args, h)
			if l, ok := p.(*loadaware.LoadAware); ok {
				la = l
			}
			return p, err
		}
	}
	// What the scheduler's plugins read, listed once; the snapshot of the
	// nodes and their pods is the scheduler's cache as it fills it before
	// it schedules.
	factory := informers.NewSharedInformerFactory(in.Client, 0)
	snapshot := &laterSnapshot{internalcache.NewEmptySnapshot()}
	nodeLister, podLister := factory.Core().V1().Nodes().Lister(), factory.Core().V1().Pods().Lister()
	fw, err := plugins.NewFramework(ctx, registry, profile,
		frameworkruntime.WithClientSet(in.Client),
		frameworkruntime.WithKubeConfig(in.RestConfig),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(factory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithParallelism(int(cfg.Parallelism)),
	)
	if err != nil {
		return nil, fmt.Errorf("building the scheduler: %w", err)
	}
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("listing %v from the API server", typ)
		}
	}
	nodes, err := nodeLister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	all, err := podLister.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	var placed []*v1.Pod
	for _, p := range all {
		// The scheduler's cache holds the pods bound to a node that have
		// not ended; the pod explained is placed as if it were not bound.
		if p.Spec.NodeName == "" || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed || p.UID == in.Pod.UID {
			continue
		}
		placed = append(placed, p)
	}
	snapshot.Snapshot = internalcache.NewSnapshot(placed, nodes)
	pod := in.Pod.DeepCopy()
	pod.Spec.NodeName = ""
	return run(ctx, fw, la, snapshot.Snapshot, pod, profile.SchedulerName)
}

// laterSnapshot is the framework's snapshot of the cluster, given to the
// framework when it is built, before the informers its plugins register have
// listed the cluster, and filled once they have.
type laterSnapshot struct{ *internalcache.Snapshot }

// run is one scheduling cycle of pod on the framework fw, every node kept.
func run(ctx context.Context, fw framework.Framework, la *loadaware.LoadAware, snapshot *internalcache.Snapshot, pod *v1.Pod, profile string) (*Explanation, error) {
	ex := &Explanation{Profile: profile}
	state := framework.NewCycleState()
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	pre, st, _ := fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() && !st.IsSkip() {
		ex.PreFilter = &Verdict{Plugin: st.Plugin(), Reasons: st.Reasons()}
	}
	var feasible []fwk.NodeInfo
	byName := map[string]*NodeExplanation{}
	for _, ni := range infos {
		n := NodeExplanation{Name: ni.Node().Name}
		switch {
		case ex.PreFilter != nil:
			n.Rejected = ex.PreFilter
		case !pre.AllNodes() && !pre.NodeNames.Has(n.Name):
			n.Rejected = &Verdict{Plugin: "PreFilter", Reasons: []string{"excluded before the filters (node affinity or name)"}}
		default:
			if st := fw.RunFilterPlugins(ctx, state, pod, ni); st.IsSuccess() {
				n.Feasible = true
				feasible = append(feasible, ni)
			} else {
				n.Rejected = &Verdict{Plugin: st.Plugin(), Reasons: st.Reasons()}
			}
		}
		ex.Nodes = append(ex.Nodes, n)
	}
	for i := range ex.Nodes {
		byName[ex.Nodes[i].Name] = &ex.Nodes[i]
	}
	if len(feasible) > 0 {
		if st := fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
			return nil, fmt.Errorf("pre-scoring: %w", st.AsError())
		}
		scores, st := fw.RunScorePlugins(ctx, state, pod, feasible)
		if !st.IsSuccess() {
			return nil, fmt.Errorf("scoring: %w", st.AsError())
		}
		var best int64 = -1
		for _, s := range scores {
			n := byName[s.Name]
			for _, ps := range s.Scores {
				n.Scores = append(n.Scores, PluginScore{Plugin: ps.Name, Score: ps.Score})
			}
			n.Total = s.TotalScore
			if s.TotalScore > best {
				best, ex.Best = s.TotalScore, nil
			}
			if s.TotalScore == best {
				ex.Best = append(ex.Best, s.Name)
			}
		}
	}
	if la != nil {
		for i, ni := range infos {
			r := la.Report(ctx, state, pod, ni, ex.Nodes[i].Feasible)
			ex.Nodes[i].Load = &r
		}
	}
	sort.SliceStable(ex.Nodes, func(i, j int) bool {
		a, b := ex.Nodes[i], ex.Nodes[j]
		if a.Feasible != b.Feasible {
			return a.Feasible
		}
		if a.Total != b.Total {
			return a.Total > b.Total
		}
		return a.Name < b.Name
	})
	sort.Strings(ex.Best)
	return ex, nil
}

// schedulerNameOf is the profile that places pod.
func schedulerNameOf(pod *v1.Pod) string {
	if pod.Spec.SchedulerName == "" {
		return v1.DefaultSchedulerName
	}
	return pod.Spec.SchedulerName
}

// snapshotSource serves one usage snapshot.
type snapshotSource struct{ snap *usage.Snapshot }

func (s snapshotSource) Snapshot() *usage.Snapshot { return s.snap }
