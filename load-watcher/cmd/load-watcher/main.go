// Command load-watcher serves real node usage, windowed, to Ballast's
// scheduler and descheduler and to paypal/load-watcher clients.
package main

import "github.com/ballast-sched/ballast/load-watcher/cmd/load-watcher/app"

func main() { app.Main() }
