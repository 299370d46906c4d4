// Package integration runs ballast-scheduler's plugins inside the real
// kube-scheduler against the in-process cluster (etcd, kube-apiserver,
// controllers, simulated nodes), with usage from load-watcher's in-process
// collector fed by its static provider. Skipped with -short.
package integration

import (
	"os"
	"testing"

	"github.com/ballast-sched/ballast/scheduler/cmd/ballast-scheduler/app"
)

// runCommandEnv makes the test binary act as the ballast-scheduler command,
// so a test can check the real process's exit code and output.
const runCommandEnv = "BALLAST_SCHEDULER_RUN_COMMAND"

func TestMain(m *testing.M) {
	if os.Getenv(runCommandEnv) == "1" {
		os.Args = append([]string{"ballast-scheduler"}, os.Args[1:]...)
		os.Exit(app.Main())
	}
	os.Exit(m.Run())
}
