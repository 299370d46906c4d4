package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/component-base/configz"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
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
// and out-of-tree plugins. The client connection and leader election are set
// for the in-process cluster; serving is off, so nothing listens. The
// scheduler stops when ctx ends, on Stop, or with the cluster.
func (c *Cluster) StartScheduler(ctx context.Context, configYAML string, plugins ...app.Option) (*Scheduler, error) {
	if configYAML == "" {
		configYAML = DefaultSchedulerConfig
	}
	path, err := c.writeSchedulerConfig(configYAML)
	if err != nil {
		return nil, err
	}
	opts := options.NewOptions()
	opts.ConfigFile = path
	opts.SecureServing.BindPort = 0

	ctx, cancel := context.WithCancel(ctx)
	context.AfterFunc(c.lifetime, cancel)
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName("kube-scheduler"))
	cc, sched, err := app.Setup(ctx, opts, plugins...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("setting up kube-scheduler: %w", err)
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
	return s, nil
}

// Stop stops the scheduler and waits until it has.
func (s *Scheduler) Stop() {
	s.once.Do(s.cancel)
	<-s.done
}

// writeSchedulerConfig points configYAML's client connection at the cluster,
// turns leader election off and saves it for kube-scheduler's --config.
func (c *Cluster) writeSchedulerConfig(configYAML string) (string, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(configYAML), &cfg); err != nil {
		return "", fmt.Errorf("parsing scheduler configuration: %w", err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	cfg["clientConnection"] = mergeMap(cfg["clientConnection"], map[string]any{"kubeconfig": c.kubeconfig})
	cfg["leaderElection"] = mergeMap(cfg["leaderElection"], map[string]any{"leaderElect": false})
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
