// Package integration runs ballast-scheduler's plugins inside the real
// kube-scheduler against the in-process cluster (etcd, kube-apiserver,
// controllers, simulated nodes), with usage from load-watcher's in-process
// collector fed by its static provider. Skipped with -short.
package integration

import (
	"fmt"
	"os"
	"runtime/pprof"
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/options"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	"k8s.io/component-base/cli"
	schedapp "k8s.io/kubernetes/cmd/kube-scheduler/app"

	"github.com/ballast-sched/ballast/scheduler/cmd/ballast-scheduler/app"
)

// runCommandEnv makes the test binary act as the ballast-scheduler command,
// so a test can check the real process's exit code and output, and a
// benchmark can run the scheduler as a process of its own.
const runCommandEnv = "BALLAST_SCHEDULER_RUN_COMMAND"

// cpuProfileEnv names a file the command writes its CPU profile to.
const cpuProfileEnv = "BALLAST_SCHEDULER_CPUPROFILE"

func TestMain(m *testing.M) {
	if os.Getenv(runCommandEnv) == "1" {
		os.Exit(runCommand())
	}
	os.Exit(m.Run())
}

// runCommand runs the test binary as the ballast-scheduler command.
func runCommand() int {
	os.Args = append([]string{"ballast-scheduler"}, os.Args[1:]...)
	if path := os.Getenv(cpuProfileEnv); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintf(os.Stderr, "creating the CPU profile: %v\n", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(os.Stderr, "starting the CPU profile: %v\n", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if os.Getenv(noOpPluginsEnv) == "1" {
		// The command as app.NewCommand builds it, with the no-op plugins.
		o := options.NewOptions()
		registry := plugins.NewRegistry(plugins.FlagSource(o), plugins.Options{Registerer: legacyregistry.Registerer()})
		if err := registry.Merge(noOpPlugins()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cmd := schedapp.NewSchedulerCommand(func(r frameworkruntime.Registry) error { return r.Merge(registry) })
		o.AddFlags(cmd.Flags())
		return cli.Run(cmd)
	}
	return app.Main()
}
