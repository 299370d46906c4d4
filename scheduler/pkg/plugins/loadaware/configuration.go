package loadaware

import (
	"fmt"

	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedscheme "k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"

	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
)

// ArgsOf returns the args LoadAware runs with in the profile named
// schedulerName of a KubeSchedulerConfiguration (YAML): decoded and defaulted
// as kube-scheduler loads its --config file, then as New defaults and
// validates them. A profile that configures no LoadAware args, or a
// configuration without that profile, gives the defaults: what a Ballast
// profile enabling the plugin runs with.
func ArgsOf(configYAML []byte, schedulerName string) (*config.LoadAwareArgs, error) {
	obj, _, err := schedscheme.Codecs.UniversalDecoder().Decode(configYAML, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decoding the scheduler configuration: %w", err)
	}
	cfg, ok := obj.(*schedconfig.KubeSchedulerConfiguration)
	if !ok {
		return nil, fmt.Errorf("want a KubeSchedulerConfiguration, got %T", obj)
	}
	for _, p := range cfg.Profiles {
		if p.SchedulerName != schedulerName {
			continue
		}
		for _, pc := range p.PluginConfig {
			if pc.Name == Name {
				return config.DecodeArgs(Name, pc.Args, config.SetDefaults_LoadAwareArgs, config.ValidateLoadAwareArgs)
			}
		}
	}
	return config.DecodeArgs[config.LoadAwareArgs](Name, nil, config.SetDefaults_LoadAwareArgs, config.ValidateLoadAwareArgs)
}
