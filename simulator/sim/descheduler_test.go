package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
)

func TestPlacedByDefaultScheduler(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{name: "second mode gains default-scheduler", in: []string{"ballast-scheduler"},
			want: []string{"ballast-scheduler", "default-scheduler"}},
		{name: "replaceDefault mode is kept", in: []string{"ballast-scheduler", "default-scheduler"},
			want: []string{"ballast-scheduler", "default-scheduler"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab := &loadawarebalance.LoadAwareBalanceArgs{SchedulerNames: tc.in}
			sr := &spreadreplicas.SpreadReplicasArgs{SchedulerNames: tc.in}
			in := append([]string(nil), tc.in...)
			placedByDefaultScheduler(&api.DeschedulerPolicy{Profiles: []api.DeschedulerProfile{{
				PluginConfigs: []api.PluginConfig{{Name: loadawarebalance.PluginName, Args: lab}, {Name: spreadreplicas.PluginName, Args: sr}},
			}}})
			if diff := cmp.Diff(tc.want, lab.SchedulerNames); diff != "" {
				t.Errorf("LoadAwareBalance schedulerNames (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, sr.SchedulerNames); diff != "" {
				t.Errorf("SpreadReplicas schedulerNames (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("the policy's list was changed in place (-want,+got):\n%s", diff)
			}
		})
	}
}
