package stack

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
)

// readingPlannedMoves points LoadAware, in every profile of the scheduler
// configuration configYAML that configures it, at the ConfigMap the
// simulated descheduler keeps its moves in, as the chart points it at the
// descheduler's: args that name a ConfigMap (plannedMoves) get the
// simulator's instead; args that name none get it too when add is set, for
// the shipped profile, which the chart installs reading the moves.
func readingPlannedMoves(configYAML string, add bool) (string, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(configYAML), &cfg); err != nil {
		return "", fmt.Errorf("the scheduler configuration: %w", err)
	}
	profiles, _ := cfg["profiles"].([]any)
	for _, p := range profiles {
		profile, _ := p.(map[string]any)
		configs, _ := profile["pluginConfig"].([]any)
		for _, c := range configs {
			pc, _ := c.(map[string]any)
			if pc == nil || pc["name"] != loadaware.Name {
				continue
			}
			args, _ := pc["args"].(map[string]any)
			if args == nil {
				args = map[string]any{}
				pc["args"] = args
			}
			planned, named := args["plannedMoves"].(map[string]any)
			if !named && !add {
				continue
			}
			if planned == nil {
				planned = map[string]any{}
			}
			planned["namespace"], planned["name"] = movesConfigMap.Namespace, movesConfigMap.Name
			args["plannedMoves"] = planned
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return "", fmt.Errorf("encoding the scheduler configuration: %w", err)
	}
	return string(out), nil
}
