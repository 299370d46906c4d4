package loadmodel

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// SchedulerPlugin is the name of the scheduler plugin whose args carry the
// Settings.
const SchedulerPlugin = "LoadAware"

// schedulerConfiguration is what SchedulerSettings reads of a
// KubeSchedulerConfiguration: each profile's name and plugin args.
type schedulerConfiguration struct {
	Profiles []struct {
		SchedulerName string `json:"schedulerName"`
		PluginConfig  []struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		} `json:"pluginConfig"`
	} `json:"profiles"`
}

// SchedulerSettings reads the Settings of the profile named schedulerName
// from a KubeSchedulerConfiguration (the file the scheduler runs with),
// defaulted and validated as the scheduler's LoadAware does. found is false
// when the profile is missing or configures no LoadAware args: the scheduler
// then runs LoadAware's defaults, if it runs it at all. The args' other
// fields (LoadAware's score terms, filterCriticalPods) are ignored.
func SchedulerSettings(data []byte, schedulerName string) (s Settings, found bool, err error) {
	var cfg schedulerConfiguration
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return Settings{}, false, fmt.Errorf("reading the scheduler's configuration: %w", err)
	}
	for i, p := range cfg.Profiles {
		if p.SchedulerName != schedulerName {
			continue
		}
		for j, pc := range p.PluginConfig {
			if pc.Name != SchedulerPlugin {
				continue
			}
			path := field.NewPath("profiles").Index(i).Child("pluginConfig").Index(j).Child("args")
			if len(pc.Args) > 0 && string(pc.Args) != "null" {
				if err := json.Unmarshal(pc.Args, &s); err != nil {
					return Settings{}, false, fmt.Errorf("%s: %w", path, err)
				}
			}
			s.SetDefaults()
			if errs := ValidateSettings(path, &s); len(errs) > 0 {
				return Settings{}, false, errs.ToAggregate()
			}
			return s, true, nil
		}
		return DefaultSettings(), false, nil
	}
	return DefaultSettings(), false, nil
}
