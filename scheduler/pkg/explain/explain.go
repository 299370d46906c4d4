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
	"sync"
	"time"

	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/scheduler"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
	"k8s.io/kubernetes/pkg/scheduler/profile"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	fwk "k8s.io/kube-scheduler/framework"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"
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

// Explain runs the profile of in.Config that places in.Pod — kube-scheduler's
// framework and the same plugins as the scheduler, on the cluster as it is
// now and the usage load-watcher serves now — and returns every node's
// verdict: where the pod would go now, and why not elsewhere. A pod already
// bound is placed as if it were not: its own usage stays in its node's
// measured figures.
func Explain(ctx context.Context, in Input) (*explanation.Explanation, error) {
	cfg, err := config.DecodeSchedulerConfiguration(in.Config)
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
		return &explanation.Explanation{OtherScheduler: true}, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	now := in.Now
	if now.IsZero() {
		now = time.Now()
	}
	// LoadAware's own code, on a source that serves in.Usage; the instance
	// of each profile is kept to report its figures.
	source := func(context.Context, fwk.Handle) (nodeload.Source, error) { return snapshotSource{in.Usage}, nil }
	registry := plugins.NewRegistry(source, plugins.Options{Now: func() time.Time { return now }})
	var mu sync.Mutex
	built := map[fwk.Handle]*loadaware.LoadAware{}
	if build, ok := registry[loadaware.Name]; ok {
		registry[loadaware.Name] = func(ctx context.Context, args runtime.Object, h fwk.Handle) (fwk.Plugin, error) {
			p, err := build(ctx, args, h)
			if l, ok := p.(*loadaware.LoadAware); ok {
				mu.Lock()
				built[h] = l
				mu.Unlock()
			}
			return p, err
		}
	}
	// kube-scheduler itself, built as the scheduler's start builds it, on
	// informers of its own that list the cluster once.
	factory := informers.NewSharedInformerFactory(in.Client, 0)
	sched, err := newScheduler(ctx, in.Client, in.RestConfig, cfg, registry, factory)
	if err != nil {
		return nil, fmt.Errorf("building the scheduler: %w", err)
	}
	// The scheduler's cache of the cluster, as it fills it before it
	// schedules.
	factory.Start(ctx.Done())
	for typ, ok := range factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return nil, fmt.Errorf("listing %v from the API server", typ)
		}
	}
	if err := sched.WaitForHandlersSync(ctx); err != nil {
		return nil, fmt.Errorf("reading the cluster: %w", err)
	}
	fw := sched.Profiles[profile.SchedulerName]
	snapshot, ok := fw.SnapshotSharedLister().(*internalcache.Snapshot)
	if !ok {
		return nil, fmt.Errorf("the %s profile has no snapshot of the cluster", profile.SchedulerName)
	}
	logger := klog.FromContext(ctx)
	if in.Pod.Spec.NodeName != "" {
		// Placed as if it were not: off its node in the cache.
		_ = sched.Cache.RemovePod(logger, in.Pod)
	}
	if err := sched.Cache.UpdateSnapshot(logger, snapshot); err != nil {
		return nil, err
	}
	la := built[fw]
	pod := in.Pod.DeepCopy()
	pod.Spec.NodeName = ""
	return run(ctx, fw, la, snapshot, pod, profile.SchedulerName)
}

// newScheduler builds kube-scheduler as the scheduler's start does, with
// cfg's profiles and the in-tree plugins with those of registry, on client
// and the informers of factory, without running it.
func newScheduler(ctx context.Context, client kubernetes.Interface, restCfg *rest.Config, cfg *schedconfig.KubeSchedulerConfiguration,
	registry frameworkruntime.Registry, factory informers.SharedInformerFactory) (*scheduler.Scheduler, error) {
	schedmetrics.Register()
	broadcaster := events.NewBroadcaster(&events.EventSinkImpl{Interface: client.EventsV1()})
	context.AfterFunc(ctx, broadcaster.Shutdown)
	return scheduler.New(ctx, client, factory, nil,
		profile.NewRecorderFactory(broadcaster),
		scheduler.WithKubeConfig(restCfg),
		scheduler.WithProfiles(cfg.Profiles...),
		scheduler.WithPercentageOfNodesToScore(cfg.PercentageOfNodesToScore),
		scheduler.WithFrameworkOutOfTreeRegistry(registry),
		scheduler.WithPodMaxBackoffSeconds(cfg.PodMaxBackoffSeconds),
		scheduler.WithPodInitialBackoffSeconds(cfg.PodInitialBackoffSeconds),
		scheduler.WithExtenders(cfg.Extenders...),
		scheduler.WithParallelism(cfg.Parallelism),
	)
}

// run is one scheduling cycle of pod on the framework fw, every node kept.
func run(ctx context.Context, fw framework.Framework, la *loadaware.LoadAware, snapshot *internalcache.Snapshot, pod *v1.Pod, profile string) (*explanation.Explanation, error) {
	ex := &explanation.Explanation{Profile: profile}
	state := framework.NewCycleState()
	infos, err := snapshot.NodeInfos().List()
	if err != nil {
		return nil, err
	}
	pre, st, _ := fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() && !st.IsSkip() {
		ex.PreFilter = &explanation.Verdict{Plugin: st.Plugin(), Reasons: st.Reasons()}
	}
	var feasible []fwk.NodeInfo
	byName := map[string]*explanation.NodeExplanation{}
	for _, ni := range infos {
		n := explanation.NodeExplanation{Name: ni.Node().Name}
		switch {
		case ex.PreFilter != nil:
			n.Rejected = ex.PreFilter
		case !pre.AllNodes() && !pre.NodeNames.Has(n.Name):
			n.Rejected = &explanation.Verdict{Plugin: "PreFilter", Reasons: []string{"excluded before the filters (node affinity or name)"}}
		default:
			if st := fw.RunFilterPlugins(ctx, state, pod, ni); st.IsSuccess() {
				n.Feasible = true
				feasible = append(feasible, ni)
			} else {
				n.Rejected = &explanation.Verdict{Plugin: st.Plugin(), Reasons: st.Reasons()}
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
				n.Scores = append(n.Scores, explanation.PluginScore{Plugin: ps.Name, Score: ps.Score})
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
