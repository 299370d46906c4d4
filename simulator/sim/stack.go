package sim

import (
	"context"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/podusage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
	schedapp "github.com/ballast-sched/ballast/scheduler/cmd/ballast-scheduler/app"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/simulator/cluster"
	"github.com/ballast-sched/ballast/simulator/metricsapi"
	"github.com/ballast-sched/ballast/simulator/scenario"
)

// stackConfig chooses what a stack runs.
type stackConfig struct {
	// scheduler is ModeDefault, ModeBallast or ModeNone.
	scheduler Mode
	// descheduler turns the in-process descheduler on; it needs no
	// scheduler of its own but reads the collector.
	descheduler       bool
	schedulerConfig   string
	deschedulerPolicy string
	// clock is the time of the collector, the served usage and the
	// descheduler: simulated in a run, real when serving.
	clock clock.PassiveClock
	// period is the clock time between two sampling rounds.
	period time.Duration
	// speed is scenario time per clock time; 0 means 1.
	speed float64
	// windows are load-watcher's statistics windows; default usage.DefaultWindows.
	windows []usage.Window
}

// stack is a scenario's cluster with everything around it: the usage model
// served as metrics.k8s.io, load-watcher's collector reading it, the chosen
// scheduler and, optionally, the descheduler. A simulated-clock run and a
// real-time serve drive the same stack.
type stack struct {
	sc    *scenario.Scenario
	cfg   stackConfig
	start time.Time
	model *usageModel
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
	descheduler   *deschedulerRunner

	cancel context.CancelFunc
	// present are the scenario nodes in the cluster; replicas the replicas
	// each scenario workload should have.
	present  map[string]bool
	replicas map[string]int32
}

// startStack starts sc's cluster with the nodes present at the start,
// serves usage, starts the collector with one sampling round, the chosen
// scheduler and descheduler, and creates the workloads' namespaces. The
// stack runs until close, whatever happens to ctx after it returns.
func startStack(ctx context.Context, sc *scenario.Scenario, cfg stackConfig) (_ *stack, err error) {
	s := &stack{
		sc: sc, cfg: cfg, start: cfg.clock.Now(), model: newUsageModel(sc), host: cluster.NewStandalone(),
		served: map[string]corev1.ResourceList{}, present: map[string]bool{}, replicas: map[string]int32{},
	}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	// The stack outlives ctx: ctx bounds only the start.
	var life context.Context
	life, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.dir, err = os.MkdirTemp("", "ballast-sim-"); err != nil {
		return nil, fmt.Errorf("creating the simulator's directory: %w", err)
	}
	if s.c, err = cluster.Start(s.host, cluster.Options{}); err != nil {
		return nil, fmt.Errorf("starting the cluster: %w", err)
	}
	for _, n := range sc.Nodes {
		if n.Absent {
			continue
		}
		if err := s.addNode(ctx, n); err != nil {
			return nil, err
		}
	}
	if err := s.startUsage(ctx, life); err != nil {
		return nil, err
	}
	if err := s.startSchedulers(life); err != nil {
		return nil, err
	}
	return s, s.createNamespaces(ctx)
}

// startUsage serves the model's usage and starts load-watcher's collector
// on it through the metrics-server provider, with one sampling round done.
func (s *stack) startUsage(ctx, life context.Context) error {
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
	s.collector, err = collector.New(collector.Config{
		Provider: prov, Nodes: nodes, Period: s.cfg.period, Windows: s.cfg.windows, StaleAfter: 3 * s.cfg.period, Now: s.cfg.clock.Now,
	})
	if err != nil {
		return fmt.Errorf("load-watcher collector: %w", err)
	}
	return s.publishAndCollect(ctx, 0, 0)
}

// startSchedulers starts the configured scheduler, fed by the collector in
// Ballast mode, and prepares the descheduler.
func (s *stack) startSchedulers(life context.Context) error {
	var err error
	switch s.cfg.scheduler {
	case ModeDefault:
		_, err = s.c.StartScheduler(life, cluster.DefaultSchedulerConfig)
	case ModeBallast:
		src := func(context.Context, fwk.Handle) (nodeload.Source, error) {
			return usageSource{s.collector, podusage.MetricsAPI{Client: s.metricsClient.MetricsV1beta1().RESTClient()}}, nil
		}
		_, err = s.c.StartScheduler(life, s.cfg.schedulerConfig, schedapp.Plugins(src)...)
	case ModeNone:
	default:
		err = fmt.Errorf("unknown scheduler %q", s.cfg.scheduler)
	}
	if err != nil {
		return fmt.Errorf("starting the %s scheduler: %w", s.cfg.scheduler, err)
	}
	if s.cfg.descheduler {
		s.descheduler, err = newDescheduler(s.c, s.collector, s.metricsClient, s.cfg.clock, s.cfg.deschedulerPolicy, s.dir)
	}
	return err
}

// usageSource is what Ballast's scheduler reads in a simulation: node usage
// from load-watcher's collector, what pods use from the simulated metrics API.
type usageSource struct {
	*collector.Collector
	podusage.MetricsAPI
}

// scenarioTime is how far the scenario has got on the stack's clock.
func (s *stack) scenarioTime() time.Duration {
	speed := s.cfg.speed
	if speed == 0 {
		speed = 1
	}
	return time.Duration(float64(s.cfg.clock.Now().Sub(s.start)) * speed)
}

// err reports a failure of the control plane.
func (s *stack) err() error { return s.host.Err() }

// close stops everything the stack started, waits for it and removes its
// files. It is safe on a partly started stack.
func (s *stack) close() {
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
func (s *stack) NodeUsage() (map[string]corev1.ResourceList, time.Time, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served, s.cfg.clock.Now(), s.cfg.period
}

// PodUsage implements metricsapi.PodSource.
func (s *stack) PodUsage() (map[types.NamespacedName]metricsapi.PodUsage, time.Time, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.servedPods, s.cfg.clock.Now(), s.cfg.period
}

// publishAndCollect serves every present node's and every bound pod's usage
// for the current placement at scenario time t (the model's step number
// step) and runs one load-watcher sampling round.
func (s *stack) publishAndCollect(ctx context.Context, t time.Duration, step int64) error {
	pods, err := s.currentPods(ctx)
	if err != nil {
		return err
	}
	p := placementOf(pods)
	served := map[string]corev1.ResourceList{}
	for node := range s.present {
		served[node] = resourceList(s.model.NodeUsage(node, p.workloads[node], t, step).Add(p.other[node]))
	}
	podUsage := s.model.PodsUsage(pods, t, step)
	servedPods := make(map[types.NamespacedName]metricsapi.PodUsage, len(podUsage))
	for _, pod := range pods {
		if u, ok := podUsage[pod.key]; ok {
			servedPods[pod.key] = metricsapi.PodUsage{Container: pod.container, Usage: resourceList(u)}
		}
	}
	s.mu.Lock()
	s.served, s.servedPods = served, servedPods
	s.mu.Unlock()
	if err := s.collector.Collect(ctx); err != nil {
		return fmt.Errorf("load-watcher sampling at %s: %w", t, err)
	}
	return nil
}

// resourceList is a as CPU and memory quantities.
func resourceList(a Amount) corev1.ResourceList {
	return corev1.ResourceList{
		corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(a.CPU*1000), resource.DecimalSI),
		corev1.ResourceMemory: *resource.NewQuantity(int64(a.Memory), resource.BinarySI),
	}
}

func (s *stack) addNode(ctx context.Context, n scenario.Node) error {
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	if n.Role != "" {
		labels["node-role.kubernetes.io/"+n.Role] = "true"
	}
	_, err := s.c.AddNode(ctx, cluster.NodeSpec{
		Name: n.Name, CPU: n.CPU.String(), Memory: n.Memory.String(), Pods: n.Pods, Arch: n.Arch,
		Labels: labels, Unschedulable: n.Unschedulable,
	})
	if err != nil {
		return fmt.Errorf("adding node %s: %w", n.Name, err)
	}
	s.present[n.Name] = true
	return nil
}

// timeline hands out a scenario's events in time order.
type timeline struct {
	events []scenario.Event
	next   int
}

func newTimeline(sc *scenario.Scenario) *timeline {
	events := append([]scenario.Event(nil), sc.Events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At.Duration < events[j].At.Duration })
	return &timeline{events: events}
}

// applyDue applies the events due at scenario time t that were not applied
// yet, stopping at the first that fails; that one counts as applied.
func (s *stack) applyDue(ctx context.Context, tl *timeline, t time.Duration) error {
	for ; tl.next < len(tl.events) && tl.events[tl.next].At.Duration <= t; tl.next++ {
		ev := tl.events[tl.next]
		if err := s.apply(ctx, ev); err != nil {
			tl.next++
			return fmt.Errorf("event %d (%s at %s): %w", tl.next-1, ev.Type, ev.At.Duration, err)
		}
	}
	return nil
}

// apply carries out one timeline event. Hogs need nothing here: the usage
// model includes them while they run.
func (s *stack) apply(ctx context.Context, ev scenario.Event) error {
	switch ev.Type {
	case scenario.Join:
		return s.addNode(ctx, s.model.nodes[ev.Node])
	case scenario.Cordon, scenario.Uncordon:
		return s.c.SetUnschedulable(ctx, ev.Node, ev.Type == scenario.Cordon)
	case scenario.Scale:
		w := s.model.workloads[ev.Workload]
		d, err := s.c.Client.AppsV1().Deployments(namespaceOf(w)).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(ev.Replicas)
		if _, err := s.c.Client.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return err
		}
		s.replicas[w.Name] = ev.Replicas
	}
	return nil
}

func namespaceOf(w scenario.Workload) string {
	if w.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return w.Namespace
}

func (s *stack) createNamespaces(ctx context.Context) error {
	for _, w := range s.sc.Workloads {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(w)}}
		if _, err := s.c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}

func (s *stack) createWorkloads(ctx context.Context) error {
	for _, w := range s.sc.Workloads {
		if _, err := s.c.Client.AppsV1().Deployments(namespaceOf(w)).Create(ctx, deployment(w), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating workload %s: %w", w.Name, err)
		}
		s.replicas[w.Name] = w.Replicas
	}
	return nil
}

func deployment(w scenario.Workload) *appsv1.Deployment {
	labels := map[string]string{"app": w.Name, workloadLabel: w.Name}
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
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: namespaceOf(w), Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(w.Replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: w.NodeSelector,
					Containers:   []corev1.Container{{Name: w.Name, Image: "registry.invalid/" + w.Name + ":sim", Resources: res}},
				},
			},
		},
	}
}
