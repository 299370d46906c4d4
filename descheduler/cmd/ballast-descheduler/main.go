// Command ballast-descheduler is the Kubernetes descheduler with Ballast's
// load-aware plugins.
package main

import (
	"os"

	"github.com/ballast-sched/ballast/descheduler/cmd/ballast-descheduler/app"
)

func main() {
	os.Exit(app.Main())
}
