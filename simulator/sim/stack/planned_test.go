package stack

import (
	"testing"

	schedulerconfig "github.com/ballast-sched/ballast/scheduler/pkg/apis/config"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
)

// LoadAware reads the simulated descheduler's moves as the chart wires it:
// the shipped profile reads them, a configuration naming a ConfigMap reads
// the simulator's instead, one naming none keeps reading none.
func TestReadingPlannedMoves(t *testing.T) {
	config := func(args string) string {
		return `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: LoadAware
    args: ` + args + "\n"
	}
	named := config("{plannedMoves: {namespace: ballast-system, name: ballast-descheduler-moves, validFor: 2m}}")
	none := config("{placementEvents: false}")
	sim := map[string]any{"namespace": movesConfigMap.Namespace, "name": movesConfigMap.Name}
	for _, tc := range []struct {
		name, config string
		add          bool
		want         any
	}{
		{name: "shipped", config: SchedulerConfig, add: true, want: sim},
		{name: "named", config: named, want: map[string]any{"namespace": movesConfigMap.Namespace, "name": movesConfigMap.Name, "validFor": "2m0s"}},
		{name: "none", config: none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := readingPlannedMoves(tc.config, tc.add)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := schedulerconfig.DecodeSchedulerConfiguration([]byte(out))
			if err != nil {
				t.Fatalf("decoding %s: %v", out, err)
			}
			args := &schedulerconfig.LoadAwareArgs{}
			for _, p := range cfg.Profiles {
				for _, pc := range p.PluginConfig {
					if p.SchedulerName == "default-scheduler" && pc.Name == loadaware.Name {
						args = pc.Args.(*schedulerconfig.LoadAwareArgs)
					}
				}
			}
			var got any
			if m := args.PlannedMoves; m != nil {
				got = map[string]any{"namespace": m.Namespace, "name": m.Name}
				if tc.name == "named" {
					got.(map[string]any)["validFor"] = m.ValidFor.Duration.String()
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("plannedMoves (-want,+got):\n%s", diff)
			}
		})
	}
}
