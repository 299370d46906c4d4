package integration

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"

	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	deschedulerplugins "github.com/ballast-sched/ballast/descheduler/pkg/plugins"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/metrics"
	"k8s.io/component-base/metrics/testutil"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	fwk "k8s.io/kube-scheduler/framework"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/features"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/load-watcher/pkg/inprocess"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// window is the load-watcher window both the scheduler and the descheduler
// read. It is short so that, after each wait, the average is the usage the
// test set, and a cycle takes seconds.
const window = 2 * time.Second

const namespace = "apps"

// ballastScheduler is the profile the test workloads opt into, as in
// Ballast's default second mode.
const ballastScheduler = "ballast-scheduler"

// schedulerConfig is ballast-scheduler's shipped profile on the short window,
// next to the cluster's own request-based default-scheduler.
var schedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: ` + ballastScheduler + `
  plugins:
    multiPoint:
      enabled:
      - name: LoadAware
        weight: 4
  pluginConfig:
  - name: LoadAware
    args:
      thresholds: {cpu: 85, memory: 90}
      window: 2s
      scoringStrategy: {weight: 3}
      podCountBalance: {}
`

// env is one test's cluster, scheduler, load-watcher and descheduler.
type env struct {
	t        *testing.T
	ctx      context.Context
	c        *cluster.Cluster
	provider *static.Provider
	lw       *inprocess.Client
	// base is each node's usage without the test's pods, in percent.
	base    map[string][2]float64
	store   *balance.Store
	metrics *balance.Metrics
	logs    *syncBuffer
	// persist, when set, keeps the store's moves in the cluster.
	persist balance.Persistence
}

func newEnv(t *testing.T, nodes ...cluster.NodeSpec) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane; run without -short")
	}
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatalf("starting the cluster: %v", err)
	}
	// Registered after the cluster's own cleanup, so it runs first: load-watcher
	// and the scheduler let go of their watches before the API server stops,
	// which otherwise waits a minute for them to end.
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	e := &env{t: t, ctx: ctx, c: c, provider: static.New(), base: map[string][2]float64{},
		store: balance.NewStore(), metrics: balance.NewMetrics(), logs: &syncBuffer{}}
	for _, n := range nodes {
		if _, err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
		e.base[n.Name] = [2]float64{10, 20}
	}
	e.lw, err = inprocess.New(inprocess.Config{
		Source: e.provider, RestConfig: c.RestConfig,
		Period: 100 * time.Millisecond, Windows: []usage.Window{usage.Window(window), usage.Window5m}, StaleAfter: time.Second,
	})
	if err != nil {
		t.Fatalf("load-watcher: %v", err)
	}
	go func() { _ = e.lw.Run(ctx) }()
	e.publishUsage()
	src := func(context.Context, fwk.Handle) (nodeload.Source, error) { return e.lw, nil }
	if _, err := c.StartScheduler(ctx, schedulerConfig, plugins.NewRegistry(src, plugins.Options{Registerer: legacyregistry.Registerer()})); err != nil {
		t.Fatalf("ballast-scheduler: %v", err)
	}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	reg := metrics.NewKubeRegistry()
	reg.MustRegister(e.metrics.Collectors()...)
	return e
}

// writePolicy writes a descheduler policy for this test.
func (e *env) writePolicy(policy string) string {
	path := filepath.Join(e.t.TempDir(), "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// cycle publishes usage that follows the pods, waits until load-watcher's
// window holds only that usage, then runs one descheduling cycle of the
// policy at path with the upstream descheduler and Ballast's plugins, and
// waits for the workloads to be whole again.
func (e *env) cycle(policyPath string, dryRun bool) {
	e.t.Helper()
	e.publishUsage()
	e.waitUsageSettled()
	e.run(policyPath, dryRun)
}

// run runs one descheduling cycle on whatever usage load-watcher has.
func (e *env) run(policyPath string, dryRun bool) {
	e.t.Helper()
	rs, policy := e.deschedulerFor(policyPath, dryRun, e.store)
	if err := descheduler.RunDeschedulerStrategies(e.logContext(e.ctx), rs, policy, "v1"); err != nil {
		e.t.Fatalf("descheduling cycle: %v", err)
	}
	e.waitWorkloadsReady()
}

// runFor runs the descheduler the way it runs in production, one process
// looping every interval with its plugins built once, for d.
func (e *env) runFor(policyPath string, dryRun bool, interval, d time.Duration) {
	e.t.Helper()
	rs, policy := e.deschedulerFor(policyPath, dryRun, nil)
	rs.DeschedulingInterval = interval
	ctx, cancel := context.WithTimeout(e.logContext(e.ctx), d)
	defer cancel()
	if err := descheduler.RunDeschedulerStrategies(ctx, rs, policy, "v1"); err != nil {
		e.t.Fatalf("descheduler: %v", err)
	}
}

// deschedulerFor sets up the upstream plugin registry with Ballast's plugins
// and returns the server options and policy of one descheduler run. A nil
// store leaves the plugin its own memory.
func (e *env) deschedulerFor(policyPath string, dryRun bool, store *balance.Store) (*options.DeschedulerServer, *api.DeschedulerPolicy) {
	e.t.Helper()
	descheduler.SetupPlugins()
	settings, found, err := loadmodel.SchedulerSettings([]byte(schedulerConfig), ballastScheduler)
	if err != nil || !found {
		e.t.Fatalf("the scheduler's settings: found %v, %v", found, err)
	}
	deps := balance.Deps{Usage: e.lw, Model: balance.NewSchedulerModel(settings), Metrics: e.metrics, Store: store, Persist: e.persist}
	deschedulerplugins.Register(pluginregistry.PluginRegistry, func(context.Context, frameworktypes.Handle) (balance.Deps, error) { return deps, nil })
	policy, err := descheduler.LoadPolicyConfig(policyPath, e.c.Client, pluginregistry.PluginRegistry)
	if err != nil {
		e.t.Fatalf("loading the policy: %v", err)
	}
	rs, err := options.NewDeschedulerServer()
	if err != nil {
		e.t.Fatal(err)
	}
	rs.Client, rs.EventClient = e.c.Client, e.c.Client
	rs.DefaultFeatureGates = features.DefaultMutableFeatureGate
	rs.DryRun = dryRun
	return rs, policy
}

// logContext sends the plugins' logs to e.logs.
func (e *env) logContext(ctx context.Context) context.Context {
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(e.logs), textlogger.Verbosity(2)))
	return klog.NewContext(ctx, logger)
}

// publishUsage sets every node's usage to its base plus the requests of the
// pods running there, as a node whose pods use what they request.
func (e *env) publishUsage() {
	e.t.Helper()
	for name, u := range e.nodeUsage() {
		e.provider.Set(name, u[0], u[1])
	}
}

func (e *env) nodeUsage() map[string][2]float64 {
	e.t.Helper()
	nodes, err := e.c.Client.CoreV1().Nodes().List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	pods, err := e.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string][2]float64{}
	for _, n := range nodes.Items {
		u := e.base[n.Name]
		for _, p := range pods.Items {
			if p.Spec.NodeName != n.Name || p.DeletionTimestamp != nil {
				continue
			}
			for _, c := range p.Spec.Containers {
				u[0] += 100 * float64(c.Resources.Requests.Cpu().MilliValue()) / float64(n.Status.Allocatable.Cpu().MilliValue())
				u[1] += 100 * float64(c.Resources.Requests.Memory().Value()) / float64(n.Status.Allocatable.Memory().Value())
			}
		}
		out[n.Name] = u
	}
	return out
}

// waitUsageSettled waits until the window average of every node is the
// usage of the pods running now; should pods change meanwhile (a
// replacement landing late), their usage is published again.
func (e *env) waitUsageSettled() {
	e.t.Helper()
	var want map[string][2]float64
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		if now := e.nodeUsage(); !maps.Equal(now, want) {
			want = now
			for name, u := range want {
				e.provider.Set(name, u[0], u[1])
			}
			return false, nil
		}
		snap := e.lw.Snapshot()
		for name, u := range want {
			nu, ok := snap.Node(name)
			if !ok {
				return false, nil
			}
			cpu, okc := nu.Get(usage.Window(window), usage.CPU)
			mem, okm := nu.Get(usage.Window(window), usage.Memory)
			if !okc || !okm || math.Abs(cpu.Max-cpu.Avg) > 1e-6 || math.Abs(mem.Max-mem.Avg) > 1e-6 ||
				math.Abs(mem.Avg-u[1]) > 0.01 || math.Abs(cpu.Avg-u[0]) > 0.01 {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("load-watcher never reported the published usage %v (last snapshot %s): %v", want, describe(e.lw.Snapshot(), want), err)
	}
}

// describe formats what load-watcher reports for the nodes in want.
func describe(snap *usage.Snapshot, want map[string][2]float64) string {
	var parts []string
	for name := range want {
		nu, ok := snap.Node(name)
		if !ok {
			parts = append(parts, name+": none or stale")
			continue
		}
		cpu, _ := nu.Get(usage.Window(window), usage.CPU)
		mem, _ := nu.Get(usage.Window(window), usage.Memory)
		parts = append(parts, fmt.Sprintf("%s: cpu avg %.3f max %.3f, memory avg %.3f max %.3f", name, cpu.Avg, cpu.Max, mem.Avg, mem.Max))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

// waitWorkloadsReady waits until every ReplicaSet has all its replicas
// ready, every Deployment's rollout is complete, and no pod of the
// namespace is terminating or unscheduled.
func (e *env) waitWorkloadsReady() {
	e.t.Helper()
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		rss, err := e.c.Client.AppsV1().ReplicaSets(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		want := int32(0)
		for _, rs := range rss.Items {
			if rs.Status.ReadyReplicas != *rs.Spec.Replicas || rs.Status.ObservedGeneration != rs.Generation {
				return false, nil
			}
			want += *rs.Spec.Replicas
		}
		// A Deployment's rollout, until its new ReplicaSet has it all.
		ds, err := e.c.Client.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, d := range ds.Items {
			st := d.Status
			if st.ObservedGeneration != d.Generation || st.UpdatedReplicas != *d.Spec.Replicas || st.AvailableReplicas != *d.Spec.Replicas ||
				st.Replicas != *d.Spec.Replicas {
				return false, nil
			}
		}
		pods, err := e.c.Client.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp != nil || p.Spec.NodeName == "" {
				return false, nil
			}
		}
		// A ReplicaSet's status lags its pods: right after an eviction it
		// still counts the evicted pod Ready before the controller has
		// created the replacement.
		return int32(len(pods.Items)) == want, nil
	})
	if err != nil {
		e.t.Fatalf("workloads did not settle: %v", err)
	}
}

// replicaSet creates a ReplicaSet of replicas pods requesting memMi MiB and
// 100m CPU each, placed by ballast-scheduler, and waits until they run.
func (e *env) replicaSet(name string, replicas int32, memMi int64, edit ...func(*appsv1.ReplicaSet)) {
	e.t.Helper()
	labels := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: podTemplate(name, memMi),
		},
	}
	for _, f := range edit {
		f(rs)
	}
	if _, err := e.c.Client.AppsV1().ReplicaSets(namespace).Create(e.ctx, rs, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.waitWorkloadsReady()
}

// podTemplate is the template of workload name's pods: labelled app=name,
// requesting memMi MiB and 100m CPU, placed by ballast-scheduler.
func podTemplate(name string, memMi int64) v1.PodTemplateSpec {
	return v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
		Spec: v1.PodSpec{SchedulerName: ballastScheduler, Containers: []v1.Container{{
			Name: "app", Image: "registry.example/" + name + ":1",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU:    resource.MustParse("100m"),
				v1.ResourceMemory: *resource.NewQuantity(memMi<<20, resource.BinarySI),
			}},
		}}},
	}
}

// podsPerNode counts the namespace's running pods per node.
func (e *env) podsPerNode() map[string]int {
	e.t.Helper()
	pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out[p.Spec.NodeName]++
		}
	}
	return out
}

func (e *env) podNames() []string {
	e.t.Helper()
	pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		out = append(out, p.Name+"@"+p.Spec.NodeName)
	}
	sort.Strings(out)
	return out
}

func (e *env) setUnschedulable(node string, on bool) {
	e.t.Helper()
	if err := e.c.SetUnschedulable(e.ctx, node, on); err != nil {
		e.t.Fatal(err)
	}
}

// evictions is the plugin's eviction count for node and reason.
func (e *env) evictions(reason, node string) float64 {
	return e.counter(e.metrics.Evictions, loadawarebalance.PluginName, reason, node)
}

func (e *env) skipped(reason string) float64 {
	return e.counter(e.metrics.SkippedCandidates, loadawarebalance.PluginName, reason)
}

func (e *env) counter(c *metrics.CounterVec, labels ...string) float64 {
	e.t.Helper()
	v, err := testutil.GetCounterMetricValue(c.WithLabelValues(labels...))
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// syncBuffer collects log lines from concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func nodeSpec(name string, cordoned bool) cluster.NodeSpec {
	return cluster.NodeSpec{Name: name, CPU: "4", Memory: "8Gi", Unschedulable: cordoned}
}
