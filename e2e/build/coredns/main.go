// Command coredns is the cluster DNS of the end-to-end lane: CoreDNS built as
// a library with a main of our own and only the plugins a cluster DNS needs,
// so it compiles in a fraction of the time of the stock binary and pulls in no
// cloud SDKs.
//
// CoreDNS documents two ways to choose plugins at compile time: edit its
// plugin.cfg and regenerate, or write an external main that blank-imports the
// wanted plugin packages, sets dnsserver.Directives and calls coremain.Run. We
// do the second, so the build needs nothing but the module proxy. Directives
// must keep the relative order of CoreDNS's own plugin.cfg, which is the order
// a query runs through the plugin chain.
//
// The plugins:
//
//   - reload: picks up Corefile changes from the ConfigMap volume.
//   - ready: the readiness endpoint (:8181/ready), true once kubernetes has synced.
//   - health: the liveness endpoint (:8080/health).
//   - errors: logs the errors a query meets.
//   - cache: caches answers.
//   - kubernetes: serves cluster.local (and reverse zones) from the API server.
//
// There is deliberately no forward plugin (and so no loop plugin, which only
// guards forward): the lane's pods must never query a resolver outside the
// machine, so names outside the cluster domain are simply not served. The
// prometheus plugin is left out too; nothing in the lane scrapes DNS metrics.
//
// Without a Corefile CoreDNS falls back to a stub that needs the log and whoami
// plugins; this binary always runs with -conf.
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

// directives lists the compiled-in plugins in CoreDNS's plugin.cfg order.
var directives = []string{
	"reload",
	"ready",
	"health",
	"errors",
	"cache",
	"kubernetes",
}

func init() {
	dnsserver.Directives = directives
}

func main() {
	coremain.Run()
}
