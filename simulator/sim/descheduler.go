package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-base/metrics"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/descheduler/cmd/descheduler/app/options"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/descheduler"
	"sigs.k8s.io/descheduler/pkg/features"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
	"github.com/ballast-sched/ballast/simulator/cluster"
)

// descheduler runs cycles of the upstream descheduler with Ballast's
// plugins and the shipped policy, in-process. The Store keeps
// LoadAwareBalance's memory (hot cycles, cooldowns) from one cycle to the
// next, as a long-running descheduler process would.
type deschedulerRunner struct {
	c          *cluster.Cluster
	deps       loadawarebalance.Deps
	policyPath string
	// registry holds the plugins' metrics, read back by hotEvictions.
	registry metrics.KubeRegistry
}

// newDescheduler writes policy into dir, which must outlive the runner.
func newDescheduler(c *cluster.Cluster, usage *collector.Collector, pods loadawarebalance.PodUsageSource, clock clock.PassiveClock, policy, dir string) (*deschedulerRunner, error) {
	path := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(path, []byte(policy), 0o600); err != nil {
		return nil, fmt.Errorf("writing the descheduler policy: %w", err)
	}
	m := loadawarebalance.NewMetrics()
	registry := metrics.NewKubeRegistry()
	registry.MustRegister(m.Collectors()...)
	return &deschedulerRunner{
		c: c,
		deps: loadawarebalance.Deps{Usage: usage, Model: loadawarebalance.SchedulerModel{}, Clock: clock,
			Store: loadawarebalance.NewStore(), PodUsage: pods, Metrics: m},
		policyPath: path,
		registry:   registry,
	}, nil
}

// hotEvictions is how many pods LoadAwareBalance has evicted so far: the
// moves off nodes above its thresholds, as its evictions_total counts them.
func (d *deschedulerRunner) hotEvictions() (int, error) {
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
			for _, l := range m.GetLabel() {
				if l.GetName() == "plugin" && l.GetValue() == loadawarebalance.PluginName {
					n += m.GetCounter().GetValue()
				}
			}
		}
	}
	return int(n), nil
}

// cycle runs one descheduling cycle.
func (d *deschedulerRunner) cycle(ctx context.Context) error {
	policy, err := d.policy()
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
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName("descheduler"))
	if err := descheduler.RunDeschedulerStrategies(ctx, rs, policy, "v1"); err != nil {
		return fmt.Errorf("descheduling cycle: %w", err)
	}
	return nil
}

// highThresholds returns LoadAwareBalance's high thresholds in the policy,
// none when the policy does not run it.
func (d *deschedulerRunner) highThresholds() (map[usage.Resource]float64, error) {
	policy, err := d.policy()
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

// policy loads the policy file with Ballast's plugins registered.
func (d *deschedulerRunner) policy() (*api.DeschedulerPolicy, error) {
	descheduler.SetupPlugins()
	pluginregistry.Register(loadawarebalance.PluginName, loadawarebalance.NewBuilder(d.deps), &loadawarebalance.LoadAwareBalance{},
		&loadawarebalance.LoadAwareBalanceArgs{}, loadawarebalance.ValidateLoadAwareBalanceArgs,
		loadawarebalance.SetDefaults_LoadAwareBalanceArgs, pluginregistry.PluginRegistry)
	pluginregistry.Register(spreadreplicas.PluginName, spreadreplicas.NewBuilder(d.deps), &spreadreplicas.SpreadReplicas{},
		&spreadreplicas.SpreadReplicasArgs{}, spreadreplicas.ValidateSpreadReplicasArgs,
		spreadreplicas.SetDefaults_SpreadReplicasArgs, pluginregistry.PluginRegistry)
	policy, err := descheduler.LoadPolicyConfig(d.policyPath, d.c.Client, pluginregistry.PluginRegistry)
	if err != nil {
		return nil, fmt.Errorf("loading the descheduler policy: %w", err)
	}
	return policy, nil
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
