package stack

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	fwk "k8s.io/kube-scheduler/framework"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/cluster/metricsapi"
	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/objects"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// Config chooses what a stack runs.
type Config struct {
	// Scheduler is ModeDefault, ModeBallast or ModeNone.
	Scheduler model.Mode
	// Descheduler turns the in-process descheduler on; it needs no
	// scheduler of its own but reads the collector.
	Descheduler       bool
	SchedulerConfig   string
	DeschedulerPolicy string
	// Clock is the time of the collector, the served usage and the
	// descheduler: simulated in a run, real when serving.
	Clock clock.PassiveClock
	// Period is the clock time between two sampling rounds.
	Period time.Duration
	// Speed is scenario time per clock time; 0 means 1.
	Speed float64
	// Windows are load-watcher's statistics windows; default usage.DefaultWindows.
	Windows []usage.Window
	// Stepped runs the scheduler a step at a time (Schedule) and everything
	// that stamps a time on pods on Clock, so that a run depends on nothing
	// but the scenario: the same scenario, seed and configuration give the
	// same result on a busy machine as on an idle one.
	Stepped bool
}

// Stack is a scenario's cluster with everything around it: the usage model
// served as metrics.k8s.io, load-watcher's collector reading it, the chosen
// scheduler and, optionally, the descheduler. A simulated-clock run and a
// real-time serve drive the same stack.
type Stack struct {
	sc    *scenario.Scenario
	cfg   Config
	start time.Time
	model *model.UsageModel
	host  *cluster.Standalone
	c     *cluster.Cluster
	// dir holds the stack's own files (the descheduler policy).
	dir string

	mu         sync.Mutex
	served     map[string]corev1.ResourceList
	servedPods map[types.NamespacedName]metricsapi.PodUsage

	metrics *metricsapi.Server
	// metricsClient reads metrics as a cluster's components read
	// metrics-server.
	metricsClient metricsclient.Interface
	collector     *collector.Collector
	// nodes is the collector's view of the cluster's nodes.
	nodes       *collector.InformerNodes
	descheduler *Descheduler
	// stepped is the scheduler of a stepped stack; nil otherwise.
	stepped *cluster.SteppedScheduler

	cancel context.CancelFunc
	// present are the scenario nodes in the cluster; replicas the replicas
	// each scenario workload should have.
	present  map[string]bool
	replicas map[string]int32
	// down are the nodes taken down (Outages), and cleared when each had
	// its pods deleted for the outage that began then.
	down    map[string]bool
	cleared map[string]time.Duration
	// runsUntil is the scenario time up to which Runs has started the
	// Jobs due.
	runsUntil time.Duration
}

// Start starts sc's cluster with the nodes present at the start,
// serves usage, starts the collector with one sampling round, the chosen
// scheduler and descheduler, and creates the workloads' namespaces. The
// stack runs until close, whatever happens to ctx after it returns.
func Start(ctx context.Context, sc *scenario.Scenario, cfg Config) (_ *Stack, err error) {
	s := &Stack{
		sc: sc, cfg: cfg, start: cfg.Clock.Now(), model: model.NewUsageModel(sc), host: cluster.NewStandalone(),
		served: map[string]corev1.ResourceList{}, present: map[string]bool{}, replicas: map[string]int32{},
		down: map[string]bool{}, cleared: map[string]time.Duration{}, runsUntil: -1,
	}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	// The stack outlives ctx: ctx bounds only the start.
	var life context.Context
	life, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.dir, err = os.MkdirTemp("", "ballast-sim-"); err != nil {
		return nil, fmt.Errorf("creating the simulator's directory: %w", err)
	}
	opts := cluster.Options{}
	if cfg.Stepped {
		// One worker per controller creates the pods of one workload after
		// another, so their order in the scheduler's queue is the
		// scenario's, and the kubelet stand-in starts them at scenario time.
		opts.ControllerWorkers, opts.Clock = 1, cfg.Clock
	}
	if s.c, err = cluster.Start(s.host, opts); err != nil {
		return nil, fmt.Errorf("starting the cluster: %w", err)
	}
	if err := s.startUsage(life); err != nil {
		return nil, err
	}
	// The scheduler first, then the nodes: a stepped scheduler ranks nodes
	// that score alike in the order it learns of them.
	if err := s.startScheduler(life); err != nil {
		return nil, err
	}
	for _, n := range sc.Nodes {
		if n.Absent {
			continue
		}
		if err := s.addNode(ctx, n); err != nil {
			return nil, err
		}
	}
	if err := s.PublishAndCollect(ctx, 0, 0); err != nil {
		return nil, err
	}
	if cfg.Descheduler {
		predicted, err := cfg.schedulerModel()
		if err != nil {
			return nil, err
		}
		if s.descheduler, err = newDescheduler(ctx, s.c, s.collector, s.metricsClient, cfg.Clock, cfg.DeschedulerPolicy, predicted,
			cfg.schedulerConfigYAML(), corev1.DefaultSchedulerName, s.dir); err != nil {
			return nil, err
		}
	}
	return s, s.createNamespaces(ctx)
}

// startUsage serves the model's usage and builds load-watcher's collector
// on it through the metrics-server provider.
func (s *Stack) startUsage(life context.Context) error {
	var err error
	if s.metrics, err = metricsapi.Start(s); err != nil {
		return err
	}
	if s.metricsClient, err = metricsclient.NewForConfig(s.metrics.RestConfig()); err != nil {
		return fmt.Errorf("creating the metrics client: %w", err)
	}
	prov, err := metricsserver.New(metricsserver.Config{Client: s.metricsClient})
	if err != nil {
		return err
	}
	nodes := collector.NewInformerNodes(s.c.Client)
	if err := nodes.Start(life); err != nil {
		return fmt.Errorf("watching nodes for load-watcher: %w", err)
	}
	s.nodes = nodes
	s.collector, err = collector.New(collector.Config{
		Provider: prov, Nodes: nodes, Period: s.cfg.Period, Windows: s.cfg.Windows, StaleAfter: 3 * s.cfg.Period, Now: s.cfg.Clock.Now,
	})
	if err != nil {
		return fmt.Errorf("load-watcher collector: %w", err)
	}
	return nil
}

// schedulerModel is the descheduler's model of the scheduler: in Ballast
// mode the settings of the configuration the scheduler runs with, read as
// the descheduler binary reads the file the chart mounts; LoadAware's
// defaults otherwise.
func (cfg Config) schedulerModel() (balance.SchedulerModel, error) {
	if cfg.Scheduler != model.ModeBallast {
		return balance.SchedulerModel{}, nil
	}
	settings, _, err := loadmodel.SchedulerSettings([]byte(cfg.SchedulerConfig), corev1.DefaultSchedulerName)
	if err != nil {
		return balance.SchedulerModel{}, fmt.Errorf("the scheduler's settings for the descheduler: %w", err)
	}
	return balance.NewSchedulerModel(settings), nil
}

// schedulerConfigYAML is the configuration the run's scheduler places pods
// with: the Ballast run's, or kube-scheduler's default one.
func (cfg Config) schedulerConfigYAML() string {
	if cfg.Scheduler == model.ModeBallast {
		return cfg.SchedulerConfig
	}
	return cluster.DefaultSchedulerConfig
}

// startScheduler starts the configured scheduler, fed by the collector in
// Ballast mode and, with the descheduler, reading its moves
// (readingPlannedMoves); stepped when the stack is.
func (s *Stack) startScheduler(life context.Context) error {
	var configYAML string
	var registry frameworkruntime.Registry
	switch s.cfg.Scheduler {
	case model.ModeDefault:
		configYAML = cluster.DefaultSchedulerConfig
	case model.ModeBallast:
		src := func(context.Context, fwk.Handle) (nodeload.Source, error) {
			return usageSource{s.collector, podusage.MetricsAPI{Client: s.metricsClient.MetricsV1beta1().RESTClient()}}, nil
		}
		configYAML, registry = s.cfg.SchedulerConfig, plugins.NewRegistry(src, plugins.Options{Now: s.cfg.Clock.Now, Registerer: legacyregistry.Registerer()})
		if s.cfg.Descheduler {
			var err error
			if configYAML, err = readingPlannedMoves(configYAML, configYAML == SchedulerConfig); err != nil {
				return err
			}
		}
	case model.ModeNone:
		return nil
	default:
		return fmt.Errorf("unknown scheduler %q", s.cfg.Scheduler)
	}
	var err error
	if s.cfg.Stepped {
		s.stepped, err = s.c.StartSteppedScheduler(life, configYAML, registry)
		if err == nil {
			s.stepped.SetRank(s.creationRank())
		}
	} else {
		_, err = s.c.StartScheduler(life, configYAML, registry)
	}
	if err != nil {
		return fmt.Errorf("starting the %s scheduler: %w", s.cfg.Scheduler, err)
	}
	return nil
}

// creationRank ranks a pod by its workload in the order CreateWorkloads
// makes them (DaemonSets, StatefulSets, Deployments, then the rest, each in
// the scenario's order): the order their pods reach the scheduler at the
// start, kept whenever several controllers make pods in one step. Pods of
// no workload of the scenario go last.
func (s *Stack) creationRank() func(*corev1.Pod) int {
	kind := func(w scenario.Workload) int {
		switch {
		case w.IsDaemonSet():
			return 0
		case w.IsStatefulSet():
			return 1
		case w.Kind == scenario.Deployment:
			return 2
		}
		return 3
	}
	n := len(s.sc.Workloads)
	ranks := make(map[string]int, n)
	for i, w := range s.sc.Workloads {
		ranks[w.Name] = kind(w)*n + i
	}
	return func(p *corev1.Pod) int {
		if r, ok := ranks[p.Labels[model.WorkloadLabel]]; ok {
			return r
		}
		return 4 * n
	}
}

// Schedule lets a stepped stack's scheduler place every pending pod it
// can, and returns how many it bound.
func (s *Stack) Schedule(ctx context.Context) (int, error) {
	if s.stepped == nil {
		return 0, fmt.Errorf("the stack's scheduler is not stepped")
	}
	return s.stepped.Schedule(ctx)
}

// usageSource is what Ballast's scheduler reads in a simulation: node usage
// from load-watcher's collector, what pods use from the simulated metrics API.
type usageSource struct {
	*collector.Collector
	podusage.MetricsAPI
}

// ScenarioTime is how far the scenario has got on the stack's clock.
func (s *Stack) ScenarioTime() time.Duration {
	speed := s.cfg.Speed
	if speed == 0 {
		speed = 1
	}
	return time.Duration(float64(s.cfg.Clock.Now().Sub(s.start)) * speed)
}

// Err reports a failure of the control plane.
func (s *Stack) Err() error { return s.host.Err() }

// Close stops everything the stack started, waits for it and removes its
// files. It is safe on a partly started stack.
func (s *Stack) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	if s.metrics != nil {
		_ = s.metrics.Stop(context.Background())
	}
	s.host.Close()
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// NodeUsage implements metricsapi.Source.
func (s *Stack) NodeUsage() (map[string]corev1.ResourceList, time.Time, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served, s.cfg.Clock.Now(), s.cfg.Period
}

// PodUsage implements metricsapi.PodSource.
func (s *Stack) PodUsage() (map[types.NamespacedName]metricsapi.PodUsage, time.Time, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.servedPods, s.cfg.Clock.Now(), s.cfg.Period
}

// PublishAndCollect serves every present node's and every bound pod's usage
// for the current placement at scenario time t (the model's step number
// step) and runs one load-watcher sampling round.
func (s *Stack) PublishAndCollect(ctx context.Context, t time.Duration, step int64) error {
	pods, err := s.CurrentPods(ctx)
	if err != nil {
		return err
	}
	p := model.PlacementOf(pods)
	// A node that is down reports nothing, nor do its pods: metrics-server
	// has no fresh sample of them.
	served := map[string]corev1.ResourceList{}
	for node := range s.present {
		if !s.model.Down(node, t) {
			served[node] = resourceList(s.model.NodeUsage(node, p.Workloads[node], t, step).Add(p.Other[node]))
		}
	}
	podUsage := s.model.PodsUsage(pods, t, step)
	servedPods := make(map[types.NamespacedName]metricsapi.PodUsage, len(podUsage))
	for _, pod := range pods {
		if s.model.Down(pod.Node, t) {
			continue
		}
		if u, ok := podUsage[pod.Key]; ok {
			servedPods[pod.Key] = metricsapi.PodUsage{Container: pod.Container, Usage: resourceList(u)}
		}
	}
	s.mu.Lock()
	s.served, s.servedPods = served, servedPods
	s.mu.Unlock()
	if err := s.waitForNodes(ctx); err != nil {
		return err
	}
	if err := s.collector.Collect(ctx); err != nil {
		return fmt.Errorf("load-watcher sampling at %s: %w", t, err)
	}
	if s.descheduler != nil {
		s.descheduler.Sample(ctx)
	}
	return nil
}

// resourceList is a as CPU and memory quantities.
func resourceList(a model.Amount) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(a.CPU*1000), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(a.Memory), resource.BinarySI),
	}
}

func (s *Stack) addNode(ctx context.Context, n scenario.Node) error {
	if _, err := s.c.AddNode(ctx, model.NodeSpec(n)); err != nil {
		return fmt.Errorf("adding node %s: %w", n.Name, err)
	}
	s.present[n.Name] = true
	s.daemonPods()
	return nil
}

// Apply carries out one timeline event. Hogs need nothing here: the usage
// model includes them while they run.
func (s *Stack) Apply(ctx context.Context, ev scenario.Event) error {
	switch ev.Type {
	case scenario.Join:
		return s.addNode(ctx, s.model.Node(ev.Node))
	case scenario.Cordon, scenario.Uncordon:
		return s.c.SetUnschedulable(ctx, ev.Node, ev.Type == scenario.Cordon)
	case scenario.Scale:
		w, ok := s.model.Workload(ev.Workload)
		if !ok {
			return fmt.Errorf("no workload %s", ev.Workload)
		}
		if w.IsStatefulSet() {
			return s.scaleStatefulSet(ctx, w, ev.Replicas)
		}
		d, err := s.c.Client.AppsV1().Deployments(namespaceOf(w)).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s.cfg.Stepped && ev.Replicas < ptr.Deref(d.Spec.Replicas, 1) {
			if err := s.rankForScaleDown(ctx, w); err != nil {
				return err
			}
		}
		d.Spec.Replicas = ptr.To(ev.Replicas)
		if _, err := s.c.Client.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return err
		}
		s.replicas[w.Name] = ev.Replicas
	case scenario.RestartDescheduler:
		if s.descheduler != nil {
			s.descheduler.Restart()
		}
	case scenario.Drain:
		return s.drain(ctx, ev.Node)
	}
	// Reboots and power losses follow the usage model's outages (Outages).
	return nil
}

// scaleStatefulSet sets w's replicas: a scale-down removes the highest
// ordinals, whose claims stay, so a scale-up brings each back to its
// volume's node.
func (s *Stack) scaleStatefulSet(ctx context.Context, w scenario.Workload, replicas int32) error {
	patch := fmt.Sprintf(`{"spec":{"replicas":%d}}`, replicas)
	if _, err := s.c.Client.AppsV1().StatefulSets(namespaceOf(w)).Patch(ctx, w.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("scaling statefulset %s: %w", w.Name, err)
	}
	s.replicas[w.Name] = replicas
	return nil
}

// Outages carries out, at scenario time t, what the nodes' outages do: a
// node that went down stops reporting and is tainted unreachable; once it
// has been down for the pods' toleration of that (PodEvictionTimeout), its
// pods other than DaemonSets' are deleted, as the taint manager does, at
// once (the machine is off: nothing would confirm a graceful deletion); a
// node that came back reports again.
func (s *Stack) Outages(ctx context.Context, t time.Duration) error {
	now := metav1.NewTime(s.start.Add(t))
	for _, node := range slices.Sorted(maps.Keys(s.present)) {
		since, down := s.model.DownSince(node, t)
		switch {
		case down && !s.down[node]:
			if err := s.c.SetReachable(ctx, node, false, now); err != nil {
				return fmt.Errorf("taking node %s down: %w", node, err)
			}
			s.down[node] = true
		case !down && s.down[node]:
			if err := s.c.SetReachable(ctx, node, true, now); err != nil {
				return fmt.Errorf("bringing node %s back: %w", node, err)
			}
			s.down[node] = false
		}
		if cleared, ok := s.cleared[node]; down && t-since >= scenario.PodEvictionTimeout && (!ok || cleared != since) {
			if err := s.deletePodsOn(ctx, node, func(p *corev1.Pod) error {
				// A pod a finalizer holds (a Job's) would stay terminating
				// for good: its node, off, never reports it stopped. It is
				// failed first, as the pod garbage collector fails the pods
				// of a node out of service, so its Job counts it and
				// replaces it (stamped with the real time: see MarkFailed).
				if len(p.Finalizers) > 0 {
					if err := cluster.MarkFailed(ctx, s.c.Client, p, "NodeLost", metav1.Now()); err != nil {
						return err
					}
				}
				return s.c.Client.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			}); err != nil {
				return fmt.Errorf("evicting the pods of unreachable node %s: %w", node, err)
			}
			s.cleared[node] = since
		}
	}
	return nil
}

// drain cordons node and evicts its pods other than DaemonSets', as
// kubectl drain does; a pod a disruption budget keeps is left.
func (s *Stack) drain(ctx context.Context, node string) error {
	if err := s.c.SetUnschedulable(ctx, node, true); err != nil {
		return err
	}
	return s.deletePodsOn(ctx, node, func(p *corev1.Pod) error {
		err := s.c.Client.PolicyV1().Evictions(p.Namespace).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace}})
		if apierrors.IsTooManyRequests(err) {
			return nil
		}
		return err
	})
}

// deletePodsOn removes, with remove, every pod bound to node that no
// DaemonSet owns and that has not finished (a Job's pod whose run is over
// stays, as the record of its run).
func (s *Stack) deletePodsOn(ctx context.Context, node string, remove func(*corev1.Pod) error) error {
	pods, err := s.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + node})
	if err != nil {
		return err
	}
	// By workload: the controllers recreate them in the same order in
	// every run, whatever the pods are called.
	slices.SortStableFunc(pods.Items, func(a, b corev1.Pod) int {
		return cmp.Compare(a.Labels[model.WorkloadLabel], b.Labels[model.WorkloadLabel])
	})
	for i := range pods.Items {
		p := &pods.Items[i]
		if ref := metav1.GetControllerOf(p); (ref != nil && ref.Kind == "DaemonSet") || p.DeletionTimestamp != nil ||
			p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if err := remove(p); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

func namespaceOf(w scenario.Workload) string {
	if w.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return w.Namespace
}

func (s *Stack) createNamespaces(ctx context.Context) error {
	for _, w := range s.sc.Workloads {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(w)}}
		if _, err := s.c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}

// CreateWorkloads creates the scenario's workloads, a kind at a time,
// waiting each time until the controllers have made the pods: the
// DaemonSets; the volumes the StatefulSets' VolumeNodes say exist, then the
// StatefulSets; the Deployments; the CronJobs and the Jobs due at the
// start. The pods reach the scheduler in the same order in every run (the
// controllers would otherwise race).
func (s *Stack) CreateWorkloads(ctx context.Context) error {
	for _, w := range s.sc.Workloads {
		if !w.IsDaemonSet() {
			continue
		}
		if _, err := s.c.Client.AppsV1().DaemonSets(namespaceOf(w)).Create(ctx, daemonSet(w), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating workload %s: %w", w.Name, err)
		}
		s.replicas[w.Name] = 0
	}
	s.daemonPods()
	if err := s.waitDaemonPods(ctx); err != nil {
		return err
	}
	stateful := false
	for _, w := range s.sc.Workloads {
		if !w.IsStatefulSet() {
			continue
		}
		if err := s.createVolumes(ctx, w); err != nil {
			return err
		}
		if _, err := s.c.Client.AppsV1().StatefulSets(namespaceOf(w)).Create(ctx, statefulSet(w), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating workload %s: %w", w.Name, err)
		}
		s.replicas[w.Name] = w.Replicas
		stateful = true
	}
	if stateful {
		if err := s.waitPods(ctx, "the StatefulSets' pods", scenario.Workload.IsStatefulSet); err != nil {
			return err
		}
	}
	runs := false
	for _, w := range s.sc.Workloads {
		switch {
		case w.Kind == scenario.Deployment:
			if _, err := s.c.Client.AppsV1().Deployments(namespaceOf(w)).Create(ctx, deployment(w), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("creating workload %s: %w", w.Name, err)
			}
			s.replicas[w.Name] = w.Replicas
		case w.RunsToCompletion():
			runs = true
		}
	}
	if !runs {
		return nil
	}
	if err := s.waitPods(ctx, "the Deployments' pods", func(w scenario.Workload) bool { return w.Kind == scenario.Deployment }); err != nil {
		return err
	}
	for _, w := range s.sc.Workloads {
		if w.Kind != scenario.CronJob {
			continue
		}
		if _, err := s.c.Client.BatchV1().CronJobs(namespaceOf(w)).Create(ctx, s.cronJob(w), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating workload %s: %w", w.Name, err)
		}
	}
	return s.Runs(ctx, 0)
}

// waitDaemonPods waits until every DaemonSet created has a pod for each
// node it should run on.
func (s *Stack) waitDaemonPods(ctx context.Context) error {
	want := s.Replicas()
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, w := range s.sc.Workloads {
			if !w.IsDaemonSet() {
				continue
			}
			pods, err := s.c.Client.CoreV1().Pods(namespaceOf(w)).List(ctx, metav1.ListOptions{LabelSelector: model.WorkloadLabel + "=" + w.Name})
			if err != nil || int32(len(pods.Items)) != want[w.Name] {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the DaemonSets' pods: %w", err)
	}
	return nil
}

// daemonSet is w as a DaemonSet: the pod template of its Deployment form.
func daemonSet(w scenario.Workload) *appsv1.DaemonSet {
	d := deployment(w)
	return &appsv1.DaemonSet{
		ObjectMeta: d.ObjectMeta,
		Spec:       appsv1.DaemonSetSpec{Selector: d.Spec.Selector, Template: d.Spec.Template},
	}
}

func deployment(w scenario.Workload) *appsv1.Deployment {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{}, Limits: corev1.ResourceList{}}
	for name, q := range map[corev1.ResourceName]resource.Quantity{corev1.ResourceCPU: w.Requests.CPU, corev1.ResourceMemory: w.Requests.Memory} {
		if !q.IsZero() {
			res.Requests[name] = q
		}
	}
	for name, q := range map[corev1.ResourceName]resource.Quantity{corev1.ResourceCPU: w.Limits.CPU, corev1.ResourceMemory: w.Limits.Memory} {
		if !q.IsZero() {
			res.Limits[name] = q
		}
	}
	return objects.MakeDeployment(w.Name).Namespace(namespaceOf(w)).Replicas(w.Replicas).Label(model.WorkloadLabel, w.Name).
		Container(w.Name).Image("registry.invalid/"+w.Name+":sim", "").Resources(res).NodeSelector(w.NodeSelector).Obj()
}

// CurrentPods returns the pods that are not terminating or finished.
func (s *Stack) CurrentPods(ctx context.Context) (map[types.UID]model.Pod, error) {
	pods, err := s.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	out := make(map[types.UID]model.Pod, len(pods.Items))
	for i := range pods.Items {
		if p, ok := model.PodOf(&pods.Items[i]); ok {
			out[pods.Items[i].UID] = p
		}
	}
	return out, nil
}

// Nodes lists the cluster's nodes.
func (s *Stack) Nodes(ctx context.Context) ([]corev1.Node, error) {
	nodes, err := s.c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	return nodes.Items, nil
}

// Scenario is the scenario the stack plays.
func (s *Stack) Scenario() *scenario.Scenario { return s.sc }

// Model is the usage model the stack serves.
func (s *Stack) Model() *model.UsageModel { return s.model }

// Started is the clock's time when the stack started: scenario time zero.
func (s *Stack) Started() time.Time { return s.start }

// Cluster is the in-process cluster.
func (s *Stack) Cluster() *cluster.Cluster { return s.c }

// Collector is load-watcher's collector reading the served usage.
func (s *Stack) Collector() *collector.Collector { return s.collector }

// MetricsAddress is the address the simulated metrics.k8s.io serves on.
func (s *Stack) MetricsAddress() string { return s.metrics.Address() }

// Descheduler is the in-process descheduler; nil when the stack runs none.
func (s *Stack) Descheduler() *Descheduler { return s.descheduler }

// Replicas is how many pods each scenario workload created so far should
// have now, events (scaling, joins) included: a DaemonSet has one on every
// node there that its selector matches (daemonPods keeps that count).
func (s *Stack) Replicas() map[string]int32 { return s.replicas }

// daemonPods sets the count of every DaemonSet created to the nodes there
// that its selector matches. A join or a DaemonSet's creation calls it, so
// the settle loop that polls Replicas computes nothing.
func (s *Stack) daemonPods() {
	for _, w := range s.sc.Workloads {
		if _, created := s.replicas[w.Name]; !created || !w.IsDaemonSet() {
			continue
		}
		s.replicas[w.Name] = 0
		for name := range s.present {
			if model.Hosts(s.model.Node(name), w) {
				s.replicas[w.Name]++
			}
		}
	}
}

// Period is the clock time between two sampling rounds.
func (s *Stack) Period() time.Duration { return s.cfg.Period }

// waitForNodes waits until load-watcher's node informer lists exactly the
// nodes in the cluster with their allocatable (a node is created first and
// given its status after), so a sampling round covers a node that just
// joined and not one that left.
func (s *Stack) waitForNodes(ctx context.Context) error {
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		nodes, err := s.nodes.Nodes()
		if err != nil || len(nodes) != len(s.present) {
			return false, nil
		}
		for _, n := range nodes {
			if !s.present[n.Name] || n.Allocatable.MilliCPU <= 0 || n.Allocatable.MemoryBytes <= 0 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for load-watcher to see the cluster's nodes: %w", err)
	}
	return nil
}

// rankForScaleDown sets the pod-deletion-cost of w's pods in the order the
// ReplicaSet controller would delete them on a scale-down: the pods on the
// node holding most of the workload first, then the most recently started.
// The controller breaks the ties that remain by the pods' ages, which in a
// simulation depend on the machine's speed, and then at random; the costs
// break them by node name instead, so a scale-down removes the same pods in
// every run.
func (s *Stack) rankForScaleDown(ctx context.Context, w scenario.Workload) error {
	list, err := s.c.Client.CoreV1().Pods(namespaceOf(w)).List(ctx, metav1.ListOptions{LabelSelector: model.WorkloadLabel + "=" + w.Name})
	if err != nil {
		return fmt.Errorf("listing the pods of %s: %w", w.Name, err)
	}
	perNode := map[string]int{}
	var pods []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil {
			pods = append(pods, p)
			perNode[p.Spec.NodeName]++
		}
	}
	started := func(p corev1.Pod) time.Time {
		if p.Status.StartTime == nil {
			return time.Time{}
		}
		return p.Status.StartTime.Time
	}
	slices.SortStableFunc(pods, func(a, b corev1.Pod) int {
		return cmp.Or(
			cmp.Compare(perNode[b.Spec.NodeName], perNode[a.Spec.NodeName]),
			started(b).Compare(started(a)),
			cmp.Compare(a.Spec.NodeName, b.Spec.NodeName))
	})
	costs := make(map[string]string, len(pods))
	for i, p := range pods {
		costs[p.Name] = strconv.Itoa(i)
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, corev1.PodDeletionCost, costs[p.Name])
		if _, err := s.c.Client.CoreV1().Pods(p.Namespace).Patch(ctx, p.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("ranking pod %s for the scale-down: %w", p.Name, err)
		}
	}
	// The ReplicaSet controller ranks the pods it has seen: a cost its
	// watch has not brought yet would leave the choice to its tie-breaks.
	return s.c.WaitControllersSee(ctx, namespaceOf(w), slices.Collect(maps.Keys(costs)), func(p *corev1.Pod) bool {
		return p.Annotations[corev1.PodDeletionCost] == costs[p.Name]
	})
}
