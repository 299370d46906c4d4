// Command ballast-sim simulates a cluster with the default scheduler and with
// Ballast and compares; `ballast sim` runs it.
package main

import "github.com/ballast-sched/ballast/simulator/cmd/ballast-sim/app"

func main() {
	app.Main()
}
