package loadaware

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
)

func TestArgsOf(t *testing.T) {
	const withThresholds = `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: ballast
  plugins:
    filter: {enabled: [{name: LoadAware}]}
  pluginConfig:
  - name: LoadAware
    args: {thresholds: {memory: 60}}
`
	defaults := map[usage.Resource]float64{usage.CPU: config.DefaultCPUThreshold, usage.Memory: config.DefaultMemoryThreshold}
	for _, tc := range []struct {
		name    string
		profile string
		want    map[usage.Resource]float64
		wantErr bool
	}{
		// The args name memory only: a threshold map replaces the defaults.
		{name: "the profile's args", profile: "ballast", want: map[usage.Resource]float64{usage.Memory: 60}},
		{name: "a profile without args", profile: "default-scheduler", want: defaults},
		{name: "no such profile", profile: "other", want: defaults},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, err := ArgsOf([]byte(withThresholds), tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, args.Thresholds); diff != "" {
				t.Errorf("thresholds (-want,+got):\n%s", diff)
			}
		})
	}
	for name, doc := range map[string]string{
		"not YAML":               "{",
		"another kind":           "apiVersion: v1\nkind: ConfigMap\n",
		"args LoadAware refuses": "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: s\n  pluginConfig:\n  - {name: LoadAware, args: {thresholds: {cpu: 0}}}\n",
	} {
		if _, err := ArgsOf([]byte(doc), "s"); err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
}
