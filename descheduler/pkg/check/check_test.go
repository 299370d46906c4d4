package check

import (
	"context"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/descheduler/config"
)

func TestCheckRefusesWhatTheDeschedulerRefusesAtStart(t *testing.T) {
	const policy = "/etc/ballast/descheduler/policy.yaml"
	const schedulerConfig = "/etc/ballast/scheduler/config.yaml"
	deployment := func(p string, args ...string) startup.Container {
		return startup.Container{
			Workload:    "Deployment/ballast-descheduler",
			LongRunning: true,
			Args:        append([]string{"--policy-config-file=" + policy, "--descheduling-interval=2m", "-v=2"}, args...),
			Files:       map[string][]byte{policy: []byte(p)},
		}
	}
	withLow := strings.Replace(config.Policy, "          deviationThresholds:", "          lowThresholds: {cpu: 0}\n          deviationThresholds:", 1)
	withSchedulerConfig := deployment(config.Policy, "--scheduler-config="+schedulerConfig)
	withSchedulerConfig.Files[schedulerConfig] = []byte("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" +
		"profiles:\n- schedulerName: ballast-scheduler\n  pluginConfig:\n  - name: LoadAware\n    args: {thresholds: {cpu: 0}}\n")
	for _, tc := range []struct {
		name      string
		container startup.Container
		want      string // empty: accepted
	}{
		{name: "shipped policy", container: deployment(config.Policy)},
		{name: "shipped policy run once outside a Deployment", container: startup.Container{
			Args: []string{"--policy-config-file=" + policy}, Files: map[string][]byte{policy: []byte(config.Policy)}}},
		{name: "zero low threshold", container: deployment(withLow), want: "lowThresholds"},
		{name: "unknown arg", container: deployment(strings.Replace(config.Policy, "deviationThresholds:", "deviationTresholds:", 1)),
			want: "deviationTresholds"},
		{name: "unknown plugin", container: deployment(strings.Replace(config.Policy, "- name: SpreadReplicas", "- name: SpreadReplica", 1)),
			want: "SpreadReplica"},
		{name: "run once in a Deployment", container: deployment(config.Policy, "--descheduling-interval=0s"), want: "--descheduling-interval"},
		{name: "run once with leader election", container: startup.Container{Args: []string{"--descheduling-interval=0s", "--leader-elect=true"}},
			want: "--descheduling-interval"},
		{name: "unknown flag", container: deployment(config.Policy, "--moves-config-map=a/b"), want: "moves-config-map"},
		{name: "moves ConfigMap without namespace", container: deployment(config.Policy, "--moves-configmap=moves"), want: "--moves-configmap"},
		{name: "negative stale after", container: deployment(config.Policy, "--load-watcher-stale-after=-1s"), want: "staleAfter"},
		{name: "invalid scheduler configuration", container: withSchedulerConfig, want: "--scheduler-config"},
		{name: "policy missing", container: startup.Container{Args: []string{"--policy-config-file=" + policy}}, want: policy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Check(context.Background(), tc.container)
			if e := startup.Verdict(err, tc.want); e != nil {
				t.Fatal(e)
			}
			if err != nil {
				t.Logf("%v", err)
			}
		})
	}
}
