package check

import (
	"context"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/core/startup"
	"github.com/ballast-sched/ballast/scheduler/config"
)

func TestCheckRefusesWhatTheSchedulerRefusesAtStart(t *testing.T) {
	const path = "/etc/ballast/scheduler/config.yaml"
	withArgs := func(cfg string, args ...string) startup.Container {
		return startup.Container{
			Workload: "Deployment/ballast-scheduler",
			Args:     append([]string{"--config=" + path, "-v=2"}, args...),
			Files:    map[string][]byte{path: []byte(cfg)},
		}
	}
	shipped := config.DefaultScheduler
	const shippedLease = "kube-system/kube-scheduler"
	for _, tc := range []struct {
		name      string
		container startup.Container
		want      string // empty: accepted
	}{
		{name: "shipped configuration", container: withArgs(shipped)},
		{name: "zero cpu threshold", container: withArgs(strings.Replace(shipped, "      scoringStrategy:", "      thresholds: {cpu: 0}\n      scoringStrategy:", 1)),
			want: "thresholds"},
		{name: "target utilization 0", container: withArgs(strings.Replace(shipped, "        weight: 5", "        weight: 5\n        type: TargetPacking\n        targetUtilization: 0", 1)),
			want: "targetUtilization"},
		{name: "unknown plugin arg", container: withArgs(strings.Replace(shipped, "      podCountBalance: {}", "      podCountBalance: {}\n      tresholds: {cpu: 50}", 1)),
			want: "tresholds"},
		{name: "unknown plugin", container: withArgs(strings.Replace(shipped, "      - name: LoadAware\n", "      - name: LoadAwear\n", 1)),
			want: "LoadAwear"},
		{name: "unknown flag", container: withArgs(shipped, "--load-watcher-adress=http://x"), want: "load-watcher-adress"},
		{name: "stale after zero", container: withArgs(shipped, "--load-watcher-stale-after=0s"), want: "--load-watcher-stale-after"},
		{name: "leader lease of the configuration", container: withArgs(shipped, "--leader-lease="+shippedLease)},
		{name: "leader lease other than the configuration's", container: withArgs(shipped, "--leader-lease=ballast-system/ballast-scheduler"), want: "--leader-lease"},
		{name: "leader lease without leader election", container: withArgs(strings.Replace(shipped, "leaderElect: true", "leaderElect: false", 1), "--leader-lease="+shippedLease),
			want: "--leader-lease"},
		{name: "leader lease not namespace/name", container: withArgs(shipped, "--leader-lease=ballast-scheduler"), want: "--leader-lease"},
		{name: "bad verbosity", container: withArgs(shipped, "-v=x"), want: "-v"},
		{name: "kube-scheduler flag of another type", container: withArgs(shipped, "--kube-api-qps=many"), want: "kube-api-qps"},
		{name: "known feature gate", container: withArgs(shipped, "--feature-gates=SchedulerQueueingHints=true")},
		{name: "unknown feature gate", container: withArgs(shipped, "--feature-gates=SchedulerQueingHints=true"), want: "SchedulerQueingHints"},
		{name: "serving port out of range", container: withArgs(shipped, "--secure-port=70000"), want: "--secure-port"},
		{name: "serving address no IP", container: withArgs(shipped, "--bind-address=localhost"), want: "bind-address"},
		{name: "config missing", container: startup.Container{Args: []string{"--config=" + path}}, want: path},
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
