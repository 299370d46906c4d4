// Command scheduler-plugin is a kube-scheduler of someone else's that runs
// Ballast's LoadAware plugin, reading usage from load-watcher as Ballast's
// own scheduler does: it requires Ballast's scheduler module and nothing
// else of Ballast's but the modules below it.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/ballast-sched/ballast/scheduler/pkg/options"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/loadaware"
)

func main() {
	o := options.NewOptions()
	registry := plugins.NewRegistry(plugins.FlagSource(o), plugins.Options{})
	cmd := app.NewSchedulerCommand(app.WithPlugin(loadaware.Name, registry[loadaware.Name]))
	o.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}
