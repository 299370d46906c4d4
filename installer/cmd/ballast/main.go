// Command ballast installs, inspects and removes Ballast on k3s and Kubernetes clusters.
package main

import "github.com/ballast-sched/ballast/installer/pkg/app"

func main() {
	app.Main()
}
