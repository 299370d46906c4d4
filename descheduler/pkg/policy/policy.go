// Package policy reads a DeschedulerPolicy as the descheduler does at start
// — decoded with the descheduler's scheme, every plugin's args validated,
// then defaulted — with the upstream plugins and Ballast's known, but without
// the descheduler's command: `ballast render`, `ballast install` and
// `ballast explain` read the chart's policy with it.
//
// The one step of the descheduler's own reading it leaves out is resolving a
// DefaultEvictor priorityThreshold given by class name, which needs the
// cluster.
package policy

import (
	"errors"
	"fmt"
	"net/url"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/descheduler/pkg/api"
	"sigs.k8s.io/descheduler/pkg/api/v1alpha2"
	"sigs.k8s.io/descheduler/pkg/descheduler/scheme"
	"sigs.k8s.io/descheduler/pkg/framework/pluginregistry"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
)

// registryMu guards the descheduler's process-wide plugin registry, which
// its policy's decoding reads each plugin's args type from.
var registryMu sync.Mutex

// Load decodes, validates and defaults policy (a DeschedulerPolicy in YAML
// or JSON). A plugin already in the process's registry keeps its entry (a
// process that runs the descheduler registered it with its builder); the
// others are added by their args only.
func Load(policy []byte) (*api.DeschedulerPolicy, error) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if pluginregistry.PluginRegistry == nil {
		pluginregistry.PluginRegistry = pluginregistry.NewRegistry()
	}
	known := pluginregistry.NewRegistry()
	plugins.RegisterUpstreamArgs(known)
	plugins.Register(known, nil)
	for name, p := range known {
		if _, ok := pluginregistry.PluginRegistry[name]; !ok {
			pluginregistry.PluginRegistry[name] = p
		}
	}
	registry := pluginregistry.PluginRegistry

	out := &api.DeschedulerPolicy{}
	decoder := scheme.Codecs.UniversalDecoder(v1alpha2.SchemeGroupVersion, api.SchemeGroupVersion)
	if err := runtime.DecodeInto(decoder, policy, out); err != nil {
		return nil, fmt.Errorf("decoding the policy: %w", err)
	}
	if err := validate(out, registry); err != nil {
		return nil, err
	}
	for _, profile := range out.Profiles {
		for _, pc := range profile.PluginConfigs {
			if d := registry[pc.Name].PluginArgDefaulter; d != nil && pc.Args != nil {
				d(pc.Args)
			}
		}
	}
	return out, nil
}

// validate refuses what the descheduler refuses when it reads its policy:
// args of a plugin it does not know, args its plugin refuses, a metrics
// source configured twice or in a way it cannot use.
func validate(p *api.DeschedulerPolicy, registry pluginregistry.Registry) error {
	var errs []error
	for _, profile := range p.Profiles {
		for _, pc := range profile.PluginConfigs {
			plugin, ok := registry[pc.Name]
			switch {
			case !ok:
				errs = append(errs, fmt.Errorf("profile %s: pluginConfig names plugin %s, which the descheduler does not have", profile.Name, pc.Name))
			case plugin.PluginArgValidator != nil:
				if err := plugin.PluginArgValidator(pc.Args); err != nil {
					errs = append(errs, fmt.Errorf("profile %s: %s: %w", profile.Name, pc.Name, err))
				}
			}
		}
	}
	sources := map[api.MetricsSource]bool{}
	for _, m := range p.MetricsProviders {
		if sources[m.Source] {
			errs = append(errs, fmt.Errorf("metricsProviders: %s is configured twice", m.Source))
		}
		sources[m.Source] = true
		if m.Source != api.PrometheusMetrics {
			continue
		}
		switch prom := m.Prometheus; {
		case prom == nil:
			errs = append(errs, errors.New("metricsProviders: the Prometheus source needs its prometheus settings"))
		case prom.URL == "":
			errs = append(errs, errors.New("metricsProviders: prometheus.url is required"))
		default:
			if _, err := url.Parse(prom.URL); err != nil {
				errs = append(errs, fmt.Errorf("metricsProviders: prometheus.url: %w", err))
			}
			if t := prom.AuthToken; t != nil && (t.SecretReference == nil || t.SecretReference.Name == "" || t.SecretReference.Namespace == "") {
				errs = append(errs, errors.New("metricsProviders: prometheus.authToken needs a secretReference with a namespace and a name"))
			}
		}
	}
	if sources[api.KubernetesMetrics] && p.MetricsCollector != nil && p.MetricsCollector.Enabled {
		errs = append(errs, errors.New("metricsProviders: the KubernetesMetrics source and the metricsCollector cannot both be on"))
	}
	return errors.Join(errs...)
}

// BalanceArgs returns the LoadAwareBalance args of policy, decoded,
// validated and defaulted as the descheduler does at start; nil when no
// profile configures LoadAwareBalance.
func BalanceArgs(policy []byte) (*loadawarebalance.LoadAwareBalanceArgs, error) {
	p, err := Load(policy)
	if err != nil {
		return nil, err
	}
	for _, prof := range p.Profiles {
		for _, pc := range prof.PluginConfigs {
			if a, ok := pc.Args.(*loadawarebalance.LoadAwareBalanceArgs); ok && pc.Name == loadawarebalance.PluginName {
				return a, nil
			}
		}
	}
	return nil, nil
}
