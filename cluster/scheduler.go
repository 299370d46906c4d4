package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/configz"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"k8s.io/kubernetes/pkg/scheduler"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"sigs.k8s.io/yaml"
)

// DefaultSchedulerConfig is a KubeSchedulerConfiguration with the upstream
// default profile.
const DefaultSchedulerConfig = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
`

// configzName is the key kube-scheduler registers its configuration under in
// the process-wide configz registry.
const configzName = "componentconfig"

// Scheduler is a kube-scheduler running inside the cluster's process.
type Scheduler struct {
	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// StartScheduler runs the real kube-scheduler against the cluster with the
// given KubeSchedulerConfiguration (YAML; empty means DefaultSchedulerConfig)
// and out-of-tree plugins (those of registry, beside the in-tree ones). The client connection and leader election are set
// for the in-process cluster; serving is off, so nothing listens. The
// scheduler stops when ctx ends, on Stop, or with the cluster.
func (c *Cluster) StartScheduler(ctx context.Context, configYAML string, registry frameworkruntime.Registry) (*Scheduler, error) {
	s, _, err := c.startScheduler(ctx, configYAML, false, registry)
	return s, err
}

// startScheduler starts kube-scheduler, stepped (see SteppedScheduler) or
// not, and returns it with the scheduler it set up.
func (c *Cluster) startScheduler(ctx context.Context, configYAML string, stepped bool, registry frameworkruntime.Registry) (*Scheduler, *scheduler.Scheduler, error) {
	if configYAML == "" {
		configYAML = DefaultSchedulerConfig
	}
	path, err := c.writeSchedulerConfig(configYAML, stepped)
	if err != nil {
		return nil, nil, err
	}
	opts := options.NewOptions()
	opts.ConfigFile = path
	opts.SecureServing.BindPort = 0
	if stepped {
		opts.Deprecated.PodMaxInUnschedulablePodsDuration = steppedUnschedulableFor
	}

	ctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(c.lifetime, cancel)
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName("kube-scheduler"))
	cc, sched, err := app.Setup(ctx, opts, func(r frameworkruntime.Registry) error { return r.Merge(registry) })
	if err != nil {
		cancel()
		return nil, nil, fmt.Errorf("setting up kube-scheduler: %w", err)
	}
	s := &Scheduler{cancel: cancel, done: make(chan struct{})}
	// configz is process-wide and refuses a second registration; only the
	// scheduler's /configz endpoint reads it, and that is not served here.
	configz.Delete(configzName)
	c.run(func() {
		defer close(s.done)
		// Run returns only when ctx ends; its error then says so.
		_ = app.Run(ctx, cc, sched)
		configz.Delete(configzName)
	})
	if stepped {
		// Nodes and pods created from now on reach the scheduler as watch
		// events, in the order they were created; those listed at start
		// come in the watch cache's order, which is random.
		synced := []cache.InformerSynced{cc.InformerFactory.Core().V1().Nodes().Informer().HasSynced,
			cc.InformerFactory.Core().V1().Pods().Informer().HasSynced}
		if !cache.WaitForCacheSync(ctx.Done(), synced...) {
			s.Stop()
			return nil, nil, fmt.Errorf("kube-scheduler's informers did not sync: %w", context.Cause(ctx))
		}
	}
	return s, sched, nil
}

// Stop stops the scheduler and waits until it has.
func (s *Scheduler) Stop() {
	s.once.Do(s.cancel)
	<-s.done
}

// writeSchedulerConfig points configYAML's client connection at the cluster,
// turns leader election off and saves it for kube-scheduler's --config. A
// stepped scheduler's configuration also runs the step gate in every profile
// (the default profile when it names none) and filters and scores nodes one
// at a time (parallelism 1).
func (c *Cluster) writeSchedulerConfig(configYAML string, stepped bool) (string, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(configYAML), &cfg); err != nil {
		return "", fmt.Errorf("parsing scheduler configuration: %w", err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["clientConnection"] = mergeMap(cfg["clientConnection"], map[string]any{"kubeconfig": c.kubeconfig})
	cfg["leaderElection"] = mergeMap(cfg["leaderElection"], map[string]any{"leaderElect": false})
	if stepped {
		gateProfiles(cfg)
		cfg["parallelism"] = 1
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("encoding scheduler configuration: %w", err)
	}
	f, err := os.CreateTemp(c.dir, "scheduler-config-*.yaml")
	if err != nil {
		return "", fmt.Errorf("creating scheduler configuration file: %w", err)
	}
	defer f.Close()
	if _, err := f.Write(out); err != nil {
		return "", fmt.Errorf("writing scheduler configuration: %w", err)
	}
	return filepath.Clean(f.Name()), nil
}

func mergeMap(existing any, set map[string]any) map[string]any {
	m, _ := existing.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	for k, v := range set {
		m[k] = v
	}
	return m
}

// gateProfiles adds the step gate to every profile's PreEnqueue and
// PreFilter plugins, adding the default profile when the configuration
// names none.
func gateProfiles(cfg map[string]any) {
	profiles, _ := cfg["profiles"].([]any)
	if len(profiles) == 0 {
		profiles = []any{map[string]any{"schedulerName": corev1.DefaultSchedulerName}}
	}
	for i, p := range profiles {
		profile, _ := p.(map[string]any)
		if profile == nil {
			profile = map[string]any{}
		}
		plugins := mergeMap(profile["plugins"], nil)
		for _, point := range []string{"preEnqueue", "preFilter"} {
			set := mergeMap(plugins[point], nil)
			enabled, _ := set["enabled"].([]any)
			set["enabled"] = append(enabled, map[string]any{"name": StepGateName})
			plugins[point] = set
		}
		profile["plugins"] = plugins
		profiles[i] = profile
	}
	cfg["profiles"] = profiles
}
