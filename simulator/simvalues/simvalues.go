// Package simvalues turns the umbrella chart's values into the configuration
// `ballast sim` replays in its Ballast run. The chart is rendered the way
// `ballast render` and `ballast install` render it, and the configuration is
// read from what it renders, so the simulation runs what would be installed.
package simvalues

import (
	"context"
	"fmt"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/releaseutil"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/cluster"
	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
)

// defaultSchedulerName is the scheduler of pods that name none, as every
// simulated pod does.
const defaultSchedulerName = "default-scheduler"

// noEvictions is the policy of a descheduler that evicts nothing: what the
// cluster gets with the descheduler off or in dry-run mode.
const noEvictions = `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles: []
`

// Config is the Ballast stack's configuration as the chart renders it,
// adapted to the simulator. The scheduler's leader election and client
// connection are left as rendered: the simulator's scheduler always replaces
// them with its own.
type Config struct {
	// SchedulerConfig is the scheduler's KubeSchedulerConfiguration, its
	// Ballast profile serving default-scheduler; kube-scheduler's default
	// profile when scheduler.enabled=false.
	SchedulerConfig string
	// DeschedulerPolicy is the descheduler's policy; one that evicts nothing
	// when descheduler.enabled=false or descheduler.dryRun=true. Its
	// schedulerNames are the cluster's; the simulator's descheduler adds
	// default-scheduler, the name SchedulerConfig serves.
	DeschedulerPolicy string
	// DeschedulingInterval is descheduler.deschedulingInterval; zero without
	// a descheduler.
	DeschedulingInterval time.Duration
	// Windows are the windows load-watcher keeps; nil when the chart deploys
	// no load-watcher.
	Windows []usage.Window
	// Period is load-watcher's sampling period (--period); zero when the
	// chart deploys no load-watcher.
	Period time.Duration
}

// Render renders the chart with vals over its defaults and returns the
// Ballast stack's configuration. Values the chart refuses, by its schema or
// a check in its templates, return the chart's error.
func Render(ctx context.Context, vals map[string]any) (*Config, error) {
	manifest, _, err := charts.Render(ctx, charts.RenderOptions{Values: vals})
	if err != nil {
		return nil, err
	}
	objs, err := index(manifest)
	if err != nil {
		return nil, err
	}
	cfg := &Config{SchedulerConfig: cluster.DefaultSchedulerConfig, DeschedulerPolicy: noEvictions}
	if cm, ok, err := get[corev1.ConfigMap](objs, "ConfigMap", "scheduler"); err != nil {
		return nil, err
	} else if ok {
		if cfg.SchedulerConfig, err = servingDefaultScheduler(cm.Data["config.yaml"]); err != nil {
			return nil, err
		}
	}
	if err := cfg.readDescheduler(objs); err != nil {
		return nil, err
	}
	if d, ok, err := get[appsv1.Deployment](objs, "Deployment", "load-watcher"); err != nil {
		return nil, err
	} else if ok {
		if cfg.Windows, err = parseWindows(flagValue(d, "windows")); err != nil {
			return nil, err
		}
		if p := flagValue(d, "period"); p != "" {
			if cfg.Period, err = time.ParseDuration(p); err != nil {
				return nil, fmt.Errorf("the chart's load-watcher period %q: %w", p, err)
			}
		}
	}
	return cfg, nil
}

// readDescheduler takes the policy and interval from the descheduler's
// ConfigMap and Deployment.
func (cfg *Config) readDescheduler(objs map[string]string) error {
	d, ok, err := get[appsv1.Deployment](objs, "Deployment", "descheduler")
	if err != nil || !ok {
		return err
	}
	interval := flagValue(d, "descheduling-interval")
	if cfg.DeschedulingInterval, err = time.ParseDuration(interval); err != nil {
		return fmt.Errorf("the chart's descheduler interval %q: %w", interval, err)
	}
	if flagValue(d, "dry-run") == "true" {
		return nil
	}
	cm, ok, err := get[corev1.ConfigMap](objs, "ConfigMap", "descheduler")
	if err != nil {
		return err
	}
	if !ok || cm.Data["policy.yaml"] == "" {
		return fmt.Errorf("the chart rendered a descheduler without its policy ConfigMap")
	}
	cfg.DeschedulerPolicy = cm.Data["policy.yaml"]
	return nil
}

// servingDefaultScheduler makes the Ballast profile serve default-scheduler.
// The chart names it scheduler.schedulerName, which only opted-in pods
// select in a cluster; the simulated workloads are the whole cluster, so
// the profile places them all. In replaceDefault mode the chart already
// renders a default-scheduler profile and the configuration is kept.
func servingDefaultScheduler(configYAML string) (string, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(configYAML), &cfg); err != nil {
		return "", fmt.Errorf("the chart's scheduler configuration: %w", err)
	}
	profiles, _ := cfg["profiles"].([]any)
	if len(profiles) == 0 {
		return "", fmt.Errorf("the chart's scheduler configuration has no profiles")
	}
	for _, p := range profiles {
		if m, _ := p.(map[string]any); m["schedulerName"] == defaultSchedulerName {
			return configYAML, nil
		}
	}
	// The chart renders Ballast's own profile first, extraProfiles after it.
	first, ok := profiles[0].(map[string]any)
	if !ok {
		return "", fmt.Errorf("the chart's scheduler configuration: profiles[0] is not an object")
	}
	first["schedulerName"] = defaultSchedulerName
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("encoding the scheduler configuration: %w", err)
	}
	return string(out), nil
}

// index maps "Kind/name" to each rendered document.
func index(manifest string) (map[string]string, error) {
	objs := map[string]string{}
	for _, doc := range releaseutil.SplitManifests(manifest) {
		var head struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			return nil, fmt.Errorf("the chart rendered a document that is not YAML: %w", err)
		}
		if head.Kind != "" {
			objs[head.Kind+"/"+head.Metadata.Name] = doc
		}
	}
	return objs, nil
}

// get decodes the component's object of kind, if the chart rendered one.
func get[T any](objs map[string]string, kind, component string) (*T, bool, error) {
	name := charts.ComponentFullname(charts.DefaultReleaseName, component)
	doc, ok := objs[kind+"/"+name]
	if !ok {
		return nil, false, nil
	}
	obj := new(T)
	if err := yaml.Unmarshal([]byte(doc), obj); err != nil {
		return nil, false, fmt.Errorf("decoding the chart's %s %s: %w", kind, name, err)
	}
	return obj, true, nil
}

// flagValue is the value of the last --name=value argument of the
// Deployment's first container (the last one wins, as with any flag, so
// extraArgs override the chart's own), or "".
func flagValue(d *appsv1.Deployment, name string) string {
	if len(d.Spec.Template.Spec.Containers) == 0 {
		return ""
	}
	var v string
	for _, arg := range d.Spec.Template.Spec.Containers[0].Args {
		if rest, ok := strings.CutPrefix(arg, "--"+name+"="); ok {
			v = rest
		}
	}
	return v
}

// parseWindows parses load-watcher's --windows list.
func parseWindows(list string) ([]usage.Window, error) {
	if list == "" {
		return nil, nil
	}
	ws, err := apiv1.ParseWindows(field.NewPath("load-watcher", "windows"), strings.Split(list, ","))
	if err != nil {
		return nil, fmt.Errorf("the chart's load-watcher windows: %w", err)
	}
	return ws, nil
}
