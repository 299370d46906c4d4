// Command ballast-scheduler is kube-scheduler with Ballast's load-aware
// plugins: every upstream flag and configuration works, plus the
// --load-watcher-* flags.
package main

import (
	"os"

	"github.com/ballast-sched/ballast/scheduler/cmd/ballast-scheduler/app"
)

func main() {
	os.Exit(app.Main())
}
