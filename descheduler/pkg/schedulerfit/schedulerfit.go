// Package schedulerfit judges a destination for a pod as Ballast's scheduler
// judges a node: with kube-scheduler's own filter plugins — those of the
// scheduler's profile, built from the scheduler's configuration file, the
// same code the scheduler runs — on the descheduler's view of the cluster.
// Volume binding and volume node affinity, volume limits, node affinity,
// taints and tolerations, inter-pod affinity, topology spread, host ports and
// requests are all the scheduler's, not a subset. A move the scheduler would
// not make is never planned.
//
// Ballast's own plugins of the profile (LoadAware and the others) are left
// out: the balance plugins judge load with the scheduler's model themselves.
// So is DynamicResources, which needs the scheduler's resource claim
// bookkeeping: a pod that claims dynamic resources is judged to fit nowhere,
// and stays.
package schedulerfit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Fit is the scheduler's filters for one profile of its configuration. It is
// safe for concurrent use.
type Fit struct {
	path, profile string
	// config is the configuration when it is given rather than read
	// (NewForConfig).
	config  []byte
	client  kubernetes.Interface
	factory informers.SharedInformerFactory

	mu       sync.Mutex
	data     []byte
	fw       framework.Framework
	snapshot *swappable
}

// New builds the filters of the profile named profile of the scheduler's
// configuration file at path (kube-scheduler's default profile when path is
// empty, the file is not there or it has no such profile), on the informers of factory, which it
// registers: call it before factory starts. The file is read again when it
// changes.
func New(ctx context.Context, path, profile string, client kubernetes.Interface, factory informers.SharedInformerFactory) (*Fit, error) {
	f := &Fit{path: path, profile: profile, client: client, factory: factory, snapshot: &swappable{internalcache.NewEmptySnapshot()}}
	if err := f.reload(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// NewForConfig is New with the scheduler's configuration given, not read from
// a file (the simulator's).
func NewForConfig(ctx context.Context, config []byte, profile string, client kubernetes.Interface, factory informers.SharedInformerFactory) (*Fit, error) {
	f := &Fit{config: config, profile: profile, client: client, factory: factory, snapshot: &swappable{internalcache.NewEmptySnapshot()}}
	if err := f.reload(ctx); err != nil {
		return nil, err
	}
	return f, nil
}

// Fits says, for each of nodes, why the scheduler's filters would not place
// pod there, as if pod were not bound to its own node; nil where they would.
// The nodes are judged on one view of the cluster, taken once, with the
// pre-filters run once, as the scheduler judges every node for a pod in one
// cycle: a view costs a pass over every pod, a node's filters little.
func (f *Fit) Fits(ctx context.Context, pod *v1.Pod, nodes []*v1.Node) []error {
	out := make([]error, len(nodes))
	fail := func(err error) []error {
		for i := range out {
			out[i] = err
		}
		return out
	}
	if len(nodes) == 0 {
		return out
	}
	if len(pod.Spec.ResourceClaims) > 0 {
		return fail(errors.New("the pod claims dynamic resources, which the descheduler does not judge"))
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reload(ctx); err != nil {
		return fail(err)
	}
	// The cluster as the scheduler's cache holds it: the nodes and the pods
	// bound to them that have not ended, but pod, placed as if it were not.
	all, err := f.factory.Core().V1().Nodes().Lister().List(labels.Everything())
	if err != nil {
		return fail(fmt.Errorf("listing nodes: %w", err))
	}
	pods, err := f.factory.Core().V1().Pods().Lister().List(labels.Everything())
	if err != nil {
		return fail(fmt.Errorf("listing pods: %w", err))
	}
	placed := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		if p.Spec.NodeName == "" || p.UID == pod.UID || p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		placed = append(placed, p)
	}
	f.snapshot.Snapshot = internalcache.NewSnapshot(placed, all)
	candidate := pod.DeepCopy()
	candidate.Spec.NodeName = ""
	// The filters read the state the pre-filters leave and do not change
	// it: the scheduler runs them on every node at once on one state.
	state := framework.NewCycleState()
	pre, st, _ := f.fw.RunPreFilterPlugins(ctx, state, candidate)
	if !st.IsSuccess() && !st.IsSkip() {
		return fail(fmt.Errorf("the scheduler's %s: %s", st.Plugin(), strings.Join(st.Reasons(), "; ")))
	}
	for i, node := range nodes {
		if !pre.AllNodes() && !pre.NodeNames.Has(node.Name) {
			out[i] = errors.New("the scheduler's pre-filters exclude the node (node affinity or name)")
			continue
		}
		ni, err := f.snapshot.NodeInfos().Get(node.Name)
		if err != nil {
			out[i] = fmt.Errorf("the node is not in the scheduler's view of the cluster: %w", err)
			continue
		}
		if st := f.fw.RunFilterPlugins(ctx, state, candidate, ni); !st.IsSuccess() {
			out[i] = fmt.Errorf("the scheduler's %s: %s", st.Plugin(), strings.Join(st.Reasons(), "; "))
		}
	}
	return out
}

// reload builds the framework again when the configuration file changed.
// Callers hold f.mu (or own f).
func (f *Fit) reload(ctx context.Context) error {
	data := f.config
	if f.path != "" {
		d, err := os.ReadFile(f.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("reading the scheduler's configuration %s: %w", f.path, err)
		default:
			data = d
		}
	}
	if f.fw != nil && bytes.Equal(data, f.data) {
		return nil
	}
	profile, err := profileOf(data, f.profile)
	if err != nil {
		return fmt.Errorf("the scheduler's configuration %s: %w", f.path, err)
	}
	schedmetrics.Register()
	fw, err := frameworkruntime.NewFramework(ctx, frameworkplugins.NewInTreeRegistry(), profile,
		frameworkruntime.WithClientSet(f.client),
		frameworkruntime.WithInformerFactory(f.factory),
		frameworkruntime.WithSnapshotSharedLister(f.snapshot),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(f.factory.Storage().V1().CSINodes().Lister())),
	)
	if err != nil {
		return fmt.Errorf("building the scheduler's filters of profile %s: %w", f.profile, err)
	}
	if f.fw != nil {
		// Informers the new plugins asked for that the factory does not
		// run yet.
		f.factory.Start(ctx.Done())
		f.factory.WaitForCacheSync(ctx.Done())
	}
	f.fw, f.data = fw, data
	return nil
}

// profileOf is the profile named name of the KubeSchedulerConfiguration in
// data (kube-scheduler's default one when data is empty), with the plugins
// kube-scheduler itself does not have taken out, and DynamicResources.
func profileOf(data []byte, name string) (*schedconfig.KubeSchedulerProfile, error) {
	var cfg *schedconfig.KubeSchedulerConfiguration
	if len(data) == 0 {
		def, err := latest.Default()
		if err != nil {
			return nil, err
		}
		cfg = def
	} else {
		obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
		if err != nil {
			return nil, err
		}
		c, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
		if !ok {
			return nil, fmt.Errorf("want a KubeSchedulerConfiguration, got %T", obj)
		}
		cfg = c
	}
	var profile *schedconfig.KubeSchedulerProfile
	for i := range cfg.Profiles {
		if cfg.Profiles[i].SchedulerName == name {
			profile = cfg.Profiles[i].DeepCopy()
		}
	}
	if profile == nil {
		// As the descheduler's model of the scheduler does: a file
		// without the profile predicts kube-scheduler's defaults.
		def, err := latest.Default()
		if err != nil {
			return nil, err
		}
		profile = def.Profiles[0].DeepCopy()
	}
	inTree := frameworkplugins.NewInTreeRegistry()
	keep := func(p string) bool { _, ok := inTree[p]; return ok && p != names.DynamicResources }
	if profile.Plugins != nil {
		for _, set := range pluginSets(profile.Plugins) {
			set.Enabled = kept(set.Enabled, keep)
		}
	}
	var configs []schedconfig.PluginConfig
	for _, pc := range profile.PluginConfig {
		if keep(pc.Name) {
			configs = append(configs, pc)
		}
	}
	profile.PluginConfig = configs
	return profile, nil
}

func kept(plugins []schedconfig.Plugin, keep func(string) bool) []schedconfig.Plugin {
	var out []schedconfig.Plugin
	for _, p := range plugins {
		if keep(p.Name) {
			out = append(out, p)
		}
	}
	return out
}

func pluginSets(p *schedconfig.Plugins) []*schedconfig.PluginSet {
	return []*schedconfig.PluginSet{&p.PreEnqueue, &p.QueueSort, &p.PreFilter, &p.Filter, &p.PostFilter, &p.PreScore, &p.Score,
		&p.Reserve, &p.Permit, &p.PreBind, &p.Bind, &p.PostBind, &p.MultiPoint, &p.PlacementGenerate, &p.PlacementScore}
}

// swappable is the framework's snapshot of the cluster, given to it once and
// replaced at each judgement.
type swappable struct{ *internalcache.Snapshot }

// Resource is a resource the filters read, by API group and name.
type Resource struct{ Group, Resource string }

// Reads are the resources the filters list and watch: the descheduler's
// ClusterRole must grant them, or its informers never sync and it never runs
// a cycle. TestReadsAreWhatTheFiltersList keeps the list true.
var Reads = []Resource{
	{"", "namespaces"}, {"", "nodes"}, {"", "persistentvolumeclaims"}, {"", "persistentvolumes"}, {"", "pods"},
	{"", "replicationcontrollers"}, {"", "services"}, {"apps", "replicasets"}, {"apps", "statefulsets"},
	{"policy", "poddisruptionbudgets"}, {"storage.k8s.io", "csidrivers"}, {"storage.k8s.io", "csinodes"},
	{"storage.k8s.io", "csistoragecapacities"}, {"storage.k8s.io", "storageclasses"}, {"storage.k8s.io", "volumeattachments"},
}
