package sim

import (
	"testing"

	"github.com/ballast-sched/ballast/simulator/sim/record"
)

func TestOptionsConfiguration(t *testing.T) {
	values := record.Configuration{Source: record.ConfigValues, Inputs: []string{"-f", "a.yaml"}}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{name: "nothing given", opts: Options{}, want: "shipped defaults"},
		{name: "a scheduler file", opts: Options{SchedulerConfig: "kind: KubeSchedulerConfiguration"}, want: "your files, the rest shipped"},
		{name: "a policy file", opts: Options{DeschedulerPolicy: "kind: DeschedulerPolicy"}, want: "your files, the rest shipped"},
		{name: "named by the caller", opts: Options{SchedulerConfig: "kind: KubeSchedulerConfiguration", Configuration: values},
			want: "the chart with your values (-f a.yaml)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.opts.configuration().String(); got != tc.want {
				t.Errorf("configuration = %q, want %q", got, tc.want)
			}
		})
	}
}
