package check

import (
	"context"
	"testing"

	"github.com/ballast-sched/ballast/core/startup"
)

func TestCheckRefusesWhatLoadWatcherRefusesAtStart(t *testing.T) {
	deployment := func(args ...string) startup.Container {
		return startup.Container{
			Workload: "Deployment/ballast-load-watcher", LongRunning: true,
			Args: append([]string{"--provider=metrics-server", "--listen-address=:2020", "--metrics-address=:2021",
				"--period=15s", "--windows=1m,5m,15m", "-v=2"}, args...),
			Env: map[string]string{"POD_IP": "192.0.2.10"},
		}
	}
	for _, tc := range []struct {
		name      string
		container startup.Container
		want      string // empty: accepted
	}{
		{name: "chart's defaults", container: deployment()},
		{name: "bound to the pod's IP", container: deployment("--bind-address=192.0.2.10")},
		{name: "negative period", container: deployment("--period=-15s"), want: "period"},
		{name: "zero period", container: deployment("--period=0s"), want: "period"},
		{name: "window shorter than the period", container: deployment("--period=2m"), want: "windows"},
		{name: "window without unit", container: deployment("--windows=1m,5"), want: "windows"},
		{name: "unknown provider", container: deployment("--provider=metric-server"), want: "provider"},
		{name: "metrics-server timeout of 0", container: deployment("--metrics-server-timeout=0s"), want: "metricsServer.timeout"},
		{name: "metrics-server timeout", container: deployment("--metrics-server-timeout=2s")},
		{name: "port out of range", container: deployment("--listen-address=:70000"), want: "listenAddress"},
		{name: "prometheus without address", container: deployment("--provider=prometheus"), want: "prometheus"},
		{name: "bearer token over plain http", container: deployment("--provider=prometheus", "--prometheus-address=http://p:9090",
			"--prometheus-bearer-token-file=/var/run/token"), want: "allowInsecureBearerToken"},
		{name: "bearer token over plain http, allowed", container: deployment("--provider=prometheus", "--prometheus-address=http://p:9090",
			"--prometheus-bearer-token-file=/var/run/token", "--prometheus-allow-insecure-bearer-token")},
		{name: "unknown flag", container: deployment("--perod=15s"), want: "perod"},
		{name: "bad verbosity", container: deployment("-v=loud"), want: "loud"},
		{name: "bad environment", container: startup.Container{Env: map[string]string{"LOAD_WATCHER_PERIOD": "soon"}}, want: "LOAD_WATCHER_PERIOD"},
		{name: "version in a Deployment", container: deployment("--version"), want: "--version"},
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
