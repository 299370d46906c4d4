package sim

import (
	"context"
	"fmt"
	"io"
	"sort"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	fwk "k8s.io/kube-scheduler/framework"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"

	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/metricsserver"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
	schedapp "github.com/ballast-sched/ballast/scheduler/cmd/ballast-scheduler/app"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
	"github.com/ballast-sched/ballast/simulator/cluster"
	"github.com/ballast-sched/ballast/simulator/metricsapi"
	"github.com/ballast-sched/ballast/simulator/scenario"
)

// Mode says which scheduling stack a run uses.
type Mode string

const (
	// ModeDefault runs the upstream kube-scheduler alone.
	ModeDefault Mode = "default"
	// ModeBallast runs ballast-scheduler's shipped profile as the default
	// scheduler, fed by load-watcher, and the shipped descheduler policy.
	ModeBallast Mode = "ballast"
)

// workloadLabel marks every pod with the scenario workload it belongs to.
const workloadLabel = "sim.ballast-sched.io/workload"

// Options tune a run.
type Options struct {
	// DeschedulerEvery is the simulated time between descheduling cycles
	// in Ballast mode; default 5m, the chart's descheduler.deschedulingInterval.
	DeschedulerEvery time.Duration
	// SettleTimeout bounds the real time waited after each step for the
	// cluster to settle; default 20s.
	SettleTimeout time.Duration
	// SchedulerConfig is the Ballast run's KubeSchedulerConfiguration;
	// default the shipped scheduler/config/default-scheduler.yaml.
	SchedulerConfig string
	// DeschedulerPolicy is the Ballast run's DeschedulerPolicy; default the
	// shipped descheduler/config/policy.yaml.
	DeschedulerPolicy string
	// Configuration names where SchedulerConfig and DeschedulerPolicy came
	// from, for the output; default shipped, or files when either is set.
	Configuration Configuration
	// Windows are the statistics windows load-watcher keeps; every window a
	// plugin reads must be one of them. Default usage.DefaultWindows.
	Windows []usage.Window
	// Progress receives a line every five simulated minutes when set.
	Progress io.Writer
}

func (o *Options) setDefaults() {
	if o.DeschedulerEvery <= 0 {
		o.DeschedulerEvery = 5 * time.Minute
	}
	if o.SchedulerConfig == "" {
		o.SchedulerConfig = schedulerConfig
	}
	if o.DeschedulerPolicy == "" {
		o.DeschedulerPolicy = deschedulerPolicy
	}
	if o.SettleTimeout <= 0 {
		o.SettleTimeout = 20 * time.Second
	}
}

// engine is one run of one scenario in one mode.
type engine struct {
	sc    *scenario.Scenario
	mode  Mode
	opts  Options
	clock *simClock
	start time.Time
	model *usageModel
	c     *cluster.Cluster

	mu     sync.Mutex
	served map[string]corev1.ResourceList

	collector   *collector.Collector
	descheduler *deschedulerRunner

	replicas map[string]int32
	present  map[string]bool
	pods     map[types.UID]placedPod
	// movedTo remembers, per workload, the nodes that received a pod
	// replacing an evicted one; evicting from one of them is ping-pong.
	movedTo map[string]sets.Set[string]
	result  *Result
}

type placedPod struct {
	workload, node string
}

// Run runs sc in mode on a fresh in-process cluster and returns what
// happened at every step.
func Run(ctx context.Context, sc *scenario.Scenario, mode Mode, opts Options) (*Result, error) {
	if mode != ModeDefault && mode != ModeBallast {
		return nil, fmt.Errorf("unknown mode %q (want %s or %s)", mode, ModeDefault, ModeBallast)
	}
	opts.setDefaults()
	host := cluster.NewStandalone()
	defer host.Close()
	c, err := cluster.Start(host, cluster.Options{})
	if err != nil {
		return nil, fmt.Errorf("starting the cluster: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now().Truncate(time.Second)
	e := &engine{
		sc: sc, mode: mode, opts: opts, clock: newSimClock(start), start: start, model: newUsageModel(sc), c: c,
		served: map[string]corev1.ResourceList{}, replicas: map[string]int32{}, present: map[string]bool{},
		pods: map[types.UID]placedPod{}, movedTo: map[string]sets.Set[string]{},
		result: &Result{Scenario: sc.Name, Mode: mode, Step: sc.Step.Duration},
	}
	if err := e.setup(ctx); err != nil {
		return nil, err
	}
	if err := e.loop(ctx); err != nil {
		return nil, err
	}
	if err := host.Err(); err != nil {
		return nil, err
	}
	e.result.summarize()
	return e.result, nil
}

// setup adds the nodes present at the start, serves usage, starts the
// collector and the scheduler of the mode.
func (e *engine) setup(ctx context.Context) error {
	for _, n := range e.sc.Nodes {
		if n.Absent {
			continue
		}
		if err := e.addNode(ctx, n); err != nil {
			return err
		}
	}
	srv, err := metricsapi.Start(e)
	if err != nil {
		return err
	}
	context.AfterFunc(ctx, func() { _ = srv.Stop(context.Background()) })
	mc, err := metricsclient.NewForConfig(srv.RestConfig())
	if err != nil {
		return fmt.Errorf("creating the metrics client: %w", err)
	}
	prov, err := metricsserver.New(metricsserver.Config{Client: mc})
	if err != nil {
		return err
	}
	nodes := collector.NewInformerNodes(e.c.Client)
	if err := nodes.Start(ctx); err != nil {
		return fmt.Errorf("watching nodes for load-watcher: %w", err)
	}
	e.collector, err = collector.New(collector.Config{
		Provider: prov, Nodes: nodes, Period: e.sc.Step.Duration, Windows: e.opts.Windows, StaleAfter: 3 * e.sc.Step.Duration, Now: e.clock.Now,
	})
	if err != nil {
		return fmt.Errorf("load-watcher collector: %w", err)
	}
	if err := e.publishAndCollect(ctx, 0, 0); err != nil {
		return err
	}
	switch e.mode {
	case ModeDefault:
		_, err = e.c.StartScheduler(ctx, cluster.DefaultSchedulerConfig)
	case ModeBallast:
		src := func(context.Context, fwk.Handle) (nodeload.Source, error) { return e.collector, nil }
		_, err = e.c.StartScheduler(ctx, e.opts.SchedulerConfig, schedapp.Plugins(src)...)
		if err == nil {
			e.descheduler, err = newDescheduler(e.c, e.collector, e.clock, e.opts.DeschedulerPolicy)
		}
	}
	if err != nil {
		return fmt.Errorf("starting the %s scheduler: %w", e.mode, err)
	}
	return e.createNamespaces(ctx)
}

// loop runs every step: usage is published and sampled, the timeline's
// events applied, the cluster left to settle, the descheduler run when due,
// and the nodes recorded.
func (e *engine) loop(ctx context.Context) error {
	step := e.sc.Step.Duration
	steps := int64(e.sc.Duration.Duration / step)
	every := max(int64(e.opts.DeschedulerEvery/step), 1)
	events := append([]scenario.Event(nil), e.sc.Events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At.Duration < events[j].At.Duration })
	next := 0
	for i := int64(0); i <= steps; i++ {
		t := time.Duration(i) * step
		e.clock.set(e.start.Add(t))
		if i > 0 {
			if err := e.publishAndCollect(ctx, t, i); err != nil {
				return err
			}
		} else if err := e.createWorkloads(ctx); err != nil {
			return err
		}
		for ; next < len(events) && events[next].At.Duration <= t; next++ {
			if err := e.apply(ctx, events[next]); err != nil {
				return fmt.Errorf("event %d (%s at %s): %w", next, events[next].Type, events[next].At.Duration, err)
			}
		}
		if err := e.settle(ctx); err != nil {
			return err
		}
		if e.descheduler != nil && i > 0 && i%every == 0 {
			if err := e.deschedule(ctx); err != nil {
				return err
			}
		}
		if err := e.record(ctx, t, i); err != nil {
			return err
		}
		if e.opts.Progress != nil && t%(5*time.Minute) == 0 && t > 0 {
			fmt.Fprintf(e.opts.Progress, "  %s: %s/%s simulated\n", e.mode, t, e.sc.Duration.Duration)
		}
	}
	return nil
}

// deschedule runs one descheduling cycle and counts the pods it evicted and
// the moves it undid.
func (e *engine) deschedule(ctx context.Context) error {
	before := e.pods
	if err := e.descheduler.cycle(ctx); err != nil {
		return err
	}
	if err := e.settle(ctx); err != nil {
		return err
	}
	after, err := e.currentPods(ctx)
	if err != nil {
		return err
	}
	for uid, p := range before {
		if _, ok := after[uid]; ok || p.node == "" {
			continue
		}
		e.result.Evictions++
		if e.movedTo[p.workload].Has(p.node) {
			e.result.PingPong++
		}
	}
	for uid, p := range after {
		if _, ok := before[uid]; ok || p.node == "" {
			continue
		}
		if e.movedTo[p.workload] == nil {
			e.movedTo[p.workload] = sets.New[string]()
		}
		e.movedTo[p.workload].Insert(p.node)
	}
	return nil
}

// NodeUsage implements metricsapi.Source.
func (e *engine) NodeUsage() (map[string]corev1.ResourceList, time.Time, time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.served, e.clock.Now(), e.sc.Step.Duration
}

// publishAndCollect serves every present node's usage for the current
// placement at t and runs one load-watcher sampling round.
func (e *engine) publishAndCollect(ctx context.Context, t time.Duration, step int64) error {
	placement, _, err := e.placement(ctx)
	if err != nil {
		return err
	}
	served := map[string]corev1.ResourceList{}
	for node := range e.present {
		u := e.model.NodeUsage(node, placement[node], t, step)
		served[node] = corev1.ResourceList{
			corev1.ResourceCPU:    *resource.NewMilliQuantity(int64(u.CPU*1000), resource.DecimalSI),
			corev1.ResourceMemory: *resource.NewQuantity(int64(u.Memory), resource.BinarySI),
		}
	}
	e.mu.Lock()
	e.served = served
	e.mu.Unlock()
	if err := e.collector.Collect(ctx); err != nil {
		return fmt.Errorf("load-watcher sampling at %s: %w", t, err)
	}
	return nil
}

func (e *engine) addNode(ctx context.Context, n scenario.Node) error {
	labels := map[string]string{}
	for k, v := range n.Labels {
		labels[k] = v
	}
	if n.Role != "" {
		labels["node-role.kubernetes.io/"+n.Role] = "true"
	}
	_, err := e.c.AddNode(ctx, cluster.NodeSpec{
		Name: n.Name, CPU: n.CPU.String(), Memory: n.Memory.String(), Pods: n.Pods, Arch: n.Arch,
		Labels: labels, Unschedulable: n.Unschedulable,
	})
	if err != nil {
		return fmt.Errorf("adding node %s: %w", n.Name, err)
	}
	e.present[n.Name] = true
	return nil
}

// apply carries out one timeline event. Hogs need nothing here: the usage
// model includes them while they run.
func (e *engine) apply(ctx context.Context, ev scenario.Event) error {
	switch ev.Type {
	case scenario.Join:
		return e.addNode(ctx, e.model.nodes[ev.Node])
	case scenario.Cordon, scenario.Uncordon:
		return e.c.SetUnschedulable(ctx, ev.Node, ev.Type == scenario.Cordon)
	case scenario.Scale:
		w := e.model.workloads[ev.Workload]
		d, err := e.c.Client.AppsV1().Deployments(namespaceOf(w)).Get(ctx, w.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		d.Spec.Replicas = ptr.To(ev.Replicas)
		if _, err := e.c.Client.AppsV1().Deployments(d.Namespace).Update(ctx, d, metav1.UpdateOptions{}); err != nil {
			return err
		}
		e.replicas[w.Name] = ev.Replicas
	}
	return nil
}

func namespaceOf(w scenario.Workload) string {
	if w.Namespace == "" {
		return metav1.NamespaceDefault
	}
	return w.Namespace
}

func (e *engine) createNamespaces(ctx context.Context) error {
	for _, w := range e.sc.Workloads {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespaceOf(w)}}
		if _, err := e.c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}

func (e *engine) createWorkloads(ctx context.Context) error {
	for _, w := range e.sc.Workloads {
		if _, err := e.c.Client.AppsV1().Deployments(namespaceOf(w)).Create(ctx, deployment(w), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating workload %s: %w", w.Name, err)
		}
		e.replicas[w.Name] = w.Replicas
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
