// Command kube-scheduler is the upstream load-aware peer that bench-balance
// compares Ballast with: kube-scheduler built from scheduler-plugins' own
// module with its Trimaran plugins, TargetLoadPacking and
// LoadVariationRiskBalancing, registered. They read node usage from a
// load-watcher service through scheduler-plugins' unmodified load-watcher
// client. The module pins the Kubernetes line scheduler-plugins is built
// on, which is why it lives outside go.work.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // REST client metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	// The scheme decodes the Trimaran plugins' args in a configuration file.
	_ "sigs.k8s.io/scheduler-plugins/apis/config/scheme"
	"sigs.k8s.io/scheduler-plugins/pkg/trimaran/loadvariationriskbalancing"
	"sigs.k8s.io/scheduler-plugins/pkg/trimaran/targetloadpacking"
)

func main() {
	cmd := app.NewSchedulerCommand(
		app.WithPlugin(targetloadpacking.Name, targetloadpacking.New),
		app.WithPlugin(loadvariationriskbalancing.Name, loadvariationriskbalancing.New),
	)
	os.Exit(cli.Run(cmd))
}
