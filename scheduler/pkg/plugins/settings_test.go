package plugins

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/pluginargs"
	"github.com/ballast-sched/ballast/scheduler/config"
	schedulerconfig "github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
)

// The scheduling model that the descheduler, `ballast explain` and the
// simulator read from a scheduler configuration (loadmodel.SchedulerSettings,
// the one reader of it) is the model LoadAware runs with when
// kube-scheduler decodes the same file: every profile of every shipped
// configuration, and one that sets thresholds.
func TestSchedulerSettingsAreWhatLoadAwareRunsWith(t *testing.T) {
	configs := map[string]string{"thresholds set": `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: ballast
  plugins:
    filter: {enabled: [{name: LoadAware}]}
  pluginConfig:
  - name: LoadAware
    args: {thresholds: {memory: 60}, scoringStrategy: {type: TargetPacking, targetUtilization: 40}}
`}
	for _, name := range []string{"ballast-scheduler.yaml", "default-scheduler.yaml", "bin-packing.yaml", "memory-only.yaml", "usage-aware-fit.yaml"} {
		data, err := config.Shipped(name)
		if err != nil {
			t.Fatal(err)
		}
		configs[name] = data
	}
	for name, data := range configs {
		cfg, err := schedulerconfig.DecodeSchedulerConfiguration([]byte(data))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range cfg.Profiles {
			var obj *schedulerconfig.LoadAwareArgs
			for _, pc := range p.PluginConfig {
				if pc.Name == loadaware.Name {
					obj = pc.Args.(*schedulerconfig.LoadAwareArgs)
				}
			}
			runs, err := pluginargs.Decode(loadaware.Name, obj, schedulerconfig.SetDefaults_LoadAwareArgs, schedulerconfig.ValidateLoadAwareArgs)
			if err != nil {
				t.Fatalf("%s, profile %s: %v", name, p.SchedulerName, err)
			}
			read, _, err := loadmodel.SchedulerSettings([]byte(data), p.SchedulerName)
			if err != nil {
				t.Fatalf("%s, profile %s: %v", name, p.SchedulerName, err)
			}
			if diff := cmp.Diff(runs.Settings, read, cmpopts.EquateEmpty(),
				cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
				t.Errorf("%s, profile %s: SchedulerSettings is not what LoadAware runs with (-runs,+read):\n%s", name, p.SchedulerName, diff)
			}
		}
	}
}
