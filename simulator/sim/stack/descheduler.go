package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	frameworktypes "sigs.k8s.io/descheduler/pkg/framework/types"

	deschedulerplugins "github.com/ballast-sched/ballast/descheduler/pkg/plugins"
	"github.com/ballast-sched/ballast/descheduler/pkg/schedulerfit"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientset "k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/clock"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/features"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
)

// Descheduler runs cycles of the upstream descheduler with Ballast's
// plugins registered beside the upstream ones, in-process, on a policy: the
// shipped one, or an upstream-only one such as the peer's. The Store keeps
// LoadAwareBalance's memory (hot cycles, cooldowns) from one cycle to the
// next, as a long-running descheduler process would.
type Descheduler struct {
	c    *cluster.Cluster
	deps balance.Deps
	// schedulerConfig is the configuration of the scheduler the pods are
	// placed by, whose profile schedulerProfile's filters judge each
	// destination (schedulerfit).
	schedulerConfig  []byte
	schedulerProfile string
	policyPath       string
	// metrics is the metrics.k8s.io client a policy with a KubernetesMetrics
	// provider reads, as the descheduler binary builds one for it.
	metrics metricsclient.Interface
	// registry holds Ballast's plugins' metrics, read back by hotEvictions.
	registry metrics.KubeRegistry
	// listing is the plugins' pod usage, sampled every
	// balance.PodSamplePeriod of simulated time as the binary samples it.
	listing     *podusage.Listing
	clock       clock.PassiveClock
	lastSampled time.Time
}

// cycleMu serialises the cycles of every runner in the process: a cycle
// rebuilds the descheduler's process-wide plugin registry, with builders
// bound to its own runner, and reads it while it starts.
var cycleMu sync.Mutex

// movesConfigMap is where the simulated descheduler keeps its moves, as the
// chart's descheduler keeps them in <release>-descheduler-moves.
var movesConfigMap = types.NamespacedName{Namespace: metav1.NamespaceSystem, Name: "ballast-descheduler-moves"}

// newDescheduler writes policy into dir, which must outlive the runner; the
// descheduler predicts the scheduler with predicted.
// Ballast's plugins read pod usage from the same simulated metrics.k8s.io
// and keep their moves in a ConfigMap of the cluster, as the chart's do.
func newDescheduler(ctx context.Context, c *cluster.Cluster, usage *collector.Collector, metricsClient metricsclient.Interface, clock clock.PassiveClock,
	policy string, predicted balance.SchedulerModel, schedulerConfig, schedulerProfile, dir string) (*Descheduler, error) {
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the descheduler policy: %w", err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: movesConfigMap.Namespace, Name: movesConfigMap.Name}}
	if _, err := c.Client.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("creating the descheduler's moves ConfigMap: %w", err)
	}
	m := balance.NewMetrics()
	registry := metrics.NewKubeRegistry()
	registry.MustRegister(m.Collectors()...)
	d := &Descheduler{
		c:          c,
		policyPath: path,
		metrics:    metricsClient,
		registry:   registry,
		clock:      clock,

		schedulerConfig:  []byte(schedulerConfig),
		schedulerProfile: schedulerProfile,
	}
	d.deps = balance.Deps{Usage: usage, Model: predicted, Clock: clock, Metrics: m,
		Persist: balance.NewMovesConfigMap(c.Client, movesConfigMap.Namespace, movesConfigMap.Name)}
	d.Restart()
	return d, nil
}

// Restart forgets what the descheduler's process remembers — its moves,
// hot streaks and pods' usage samples — as a restart or a new leader does;
// the moves it kept in the cluster remain.
func (d *Descheduler) Restart() {
	d.listing = &podusage.Listing{Client: d.metrics.MetricsV1beta1().RESTClient(), Clock: d.clock, Trend: &podusage.Trend{}}
	d.deps.Store, d.deps.PodUsage, d.deps.Growth = balance.NewStore(), d.listing, d.listing.Trend
	d.lastSampled = time.Time{}
}

// Moves returns the moves the descheduler keeps in the cluster, oldest
// first: why each pod was moved and where its replacement was planned.
func (d *Descheduler) Moves(ctx context.Context) ([]balance.Move, error) {
	data, _, err := d.deps.Persist.Load(ctx)
	if err != nil {
		return nil, err
	}
	moves, err := balance.DecodeMoves(data)
	if err != nil {
		return nil, fmt.Errorf("decoding the descheduler's moves: %w", err)
	}
	return moves, nil
}

// Sample lists every pod's usage, as the descheduler binary does in the
// background every balance.PodSamplePeriod, once that much simulated time
// has passed since the last list.
func (d *Descheduler) Sample(ctx context.Context) {
	if now := d.clock.Now(); d.lastSampled.IsZero() || now.Sub(d.lastSampled) >= balance.PodSamplePeriod {
		d.listing.Sample(ctx)
		d.lastSampled = now
	}
}

// GrowingPods returns the pods the descheduler reports as growing
// (pod_memory_growth_mib_per_minute), by name, with their MiB per minute.
func (d *Descheduler) GrowingPods() (map[string]float64, error) {
	families, err := d.registry.Gather()
	if err != nil {
		return nil, fmt.Errorf("reading the descheduler's metrics: %w", err)
	}
	out := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "ballast_descheduler_pod_memory_growth_mib_per_minute" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "pod" {
					out[l.GetValue()] = m.GetGauge().GetValue()
				}
			}
		}
	}
	return out, nil
}

// HotEvictions is how many pods LoadAwareBalance has evicted so far off
// nodes above its high thresholds, as its evictions_total counts them
// (reason hot-…); moves by plan, for balance (reason plan), are not relief
// of a hot node.
func (d *Descheduler) HotEvictions() (int, error) {
	families, err := d.registry.Gather()
	if err != nil {
		return 0, fmt.Errorf("reading the descheduler's metrics: %w", err)
	}
	var n float64
	for _, f := range families {
		if f.GetName() != "ballast_descheduler_evictions_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var plugin, reason string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "plugin":
					plugin = l.GetValue()
				case "reason":
					reason = l.GetValue()
				}
			}
			if plugin == loadawarebalance.PluginName && strings.HasPrefix(reason, "hot-") {
				n += m.GetCounter().GetValue()
			}
		}
	}
	return int(n), nil
}

// Cycle runs one descheduling cycle.
func (d *Descheduler) Cycle(ctx context.Context) error {
	cycleMu.Lock()
	defer cycleMu.Unlock()
	policy, err := d.loadPolicy()
	if err != nil {
		return err
	}
	placedByDefaultScheduler(policy)
	rs, err := options.NewDeschedulerServer()
	if err != nil {
		return fmt.Errorf("descheduler options: %w", err)
	}
	rs.Client, rs.EventClient = d.c.Client, d.c.Client
	rs.DefaultFeatureGates = features.DefaultMutableFeatureGate
	if readsKubernetesMetrics(policy) {
		// Each cycle starts the descheduler's metrics collector afresh: its
		// first sample is the current usage, where a long-running process
		// would hold an average (weight 0.9 on the past, a sample every 5s)
		// that follows the usage within about a minute.
		rs.MetricsClient = d.metrics
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName("descheduler"))
	if err := descheduler.RunDeschedulerStrategies(ctx, rs, policy, "v1"); err != nil {
		return fmt.Errorf("descheduling cycle: %w", err)
	}
	return nil
}

// HighThresholds returns LoadAwareBalance's high thresholds in the policy,
// none when the policy does not run it.
func (d *Descheduler) HighThresholds() (map[usage.Resource]float64, error) {
	cycleMu.Lock()
	defer cycleMu.Unlock()
	policy, err := d.loadPolicy()
	if err != nil {
		return nil, err
	}
	out := map[usage.Resource]float64{}
	for _, p := range policy.Profiles {
		for _, pc := range p.PluginConfigs {
			if a, ok := pc.Args.(*loadawarebalance.LoadAwareBalanceArgs); ok {
				for r, v := range a.HighThresholds {
					out[r] = v
				}
			}
		}
	}
	return out, nil
}

// loadPolicy loads the policy file with Ballast's plugins registered, bound
// to this runner. Callers hold cycleMu.
func (d *Descheduler) loadPolicy() (*api.DeschedulerPolicy, error) {
	return loadPolicy(d.policyPath, d.c.Client, d.deps, d.schedulerConfig, d.schedulerProfile)
}

// loadPolicy decodes, defaults and validates the policy file at path with
// the upstream plugins and Ballast's, bound to deps, in the descheduler's
// process-wide registry. Callers hold cycleMu.
func loadPolicy(path string, client clientset.Interface, deps balance.Deps, schedulerConfig []byte, schedulerProfile string) (*api.DeschedulerPolicy, error) {
	descheduler.SetupPlugins()
	// The scheduler's own filters judge each destination, as in the
	// descheduler binary: built once per cycle, on the cycle's informers.
	var once sync.Once
	var err error
	deschedulerplugins.Register(pluginregistry.PluginRegistry, func(ctx context.Context, h frameworktypes.Handle) (balance.Deps, error) {
		once.Do(func() {
			if h.ClientSet() == nil || h.SharedInformerFactory() == nil {
				return
			}
			var fit *schedulerfit.Fit
			if fit, err = schedulerfit.NewForConfig(ctx, schedulerConfig, schedulerProfile, h.ClientSet(), h.SharedInformerFactory()); err == nil {
				deps.Fit = fit.Fits
			}
		})
		return deps, err
	})
	policy, err := descheduler.LoadPolicyConfig(path, client, pluginregistry.PluginRegistry)
	if err != nil {
		return nil, fmt.Errorf("loading the descheduler policy: %w", err)
	}
	return policy, nil
}

// readsKubernetesMetrics reports whether policy reads metrics.k8s.io: the
// condition on which the descheduler binary creates a metrics client.
func readsKubernetesMetrics(policy *api.DeschedulerPolicy) bool {
	if policy.MetricsCollector != nil && policy.MetricsCollector.Enabled {
		return true
	}
	return slices.ContainsFunc(policy.MetricsProviders, func(p api.MetricsProvider) bool { return p.Source == api.KubernetesMetrics })
}

// placedByDefaultScheduler lets the Ballast plugins move the simulated pods.
// Those name no scheduler, so they are default-scheduler's, and in the
// simulation Ballast's profile serves default-scheduler: the policy's
// schedulerNames, written for a cluster where Ballast's pods name its
// profile, would leave every pod in place.
func placedByDefaultScheduler(policy *api.DeschedulerPolicy) {
	add := func(names []string) []string {
		if slices.Contains(names, v1.DefaultSchedulerName) {
			return names
		}
		return append(slices.Clone(names), v1.DefaultSchedulerName)
	}
	for _, p := range policy.Profiles {
		for _, pc := range p.PluginConfigs {
			switch a := pc.Args.(type) {
			case *loadawarebalance.LoadAwareBalanceArgs:
				a.SchedulerNames = add(a.SchedulerNames)
			case *spreadreplicas.SpreadReplicasArgs:
				a.SchedulerNames = add(a.SchedulerNames)
			}
		}
	}
}
