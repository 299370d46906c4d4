package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are the packages the ballast binary must not carry:
//   - the simulator (behind `ballast sim`, a program of its own) and the
//     in-process cluster, with the Kubernetes control plane and etcd server
//     they link;
//   - the upstream commands and their option packages (kube-scheduler's
//     and the descheduler's: the API server's serving and storage flags,
//     etcd's client), which the components' start-up checks and `ballast
//     explain` do without (scheduler/pkg/check, descheduler/pkg/check,
//     scheduler/pkg/explain);
//   - the components' own commands: the CLI uses their libraries under pkg/;
//   - kube-scheduler's framework and plugins, and Ballast's: the scheduler's
//     start-up check knows what the plugins implement without building them,
//     and `ballast explain pod` asks the running scheduler (its explain
//     endpoint), which runs them; linked, they would take the binary past
//     64 MiB (docs/performance.md#cli).
var heavy = []string{
	"github.com/ballast-sched/ballast/simulator",
	"github.com/ballast-sched/ballast/cluster",
	"github.com/ballast-sched/ballast/scheduler/cmd",
	"github.com/ballast-sched/ballast/descheduler/cmd",
	"github.com/ballast-sched/ballast/load-watcher/cmd",
	"k8s.io/kubernetes/cmd",
	"k8s.io/kubernetes/pkg/controlplane",
	"k8s.io/kubernetes/pkg/controller",
	"k8s.io/kubernetes/pkg/scheduler/framework/runtime",
	"k8s.io/kubernetes/pkg/scheduler/backend",
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins",
	"sigs.k8s.io/descheduler/cmd",
	"k8s.io/apiserver/pkg/server/options",
	"go.etcd.io/etcd/server",
	"go.etcd.io/etcd/client",
}

// heavyAlone are packages the binary must not carry whose subpackages it
// may: the descheduler's runtime, which links its command's options, beside
// its scheme and pod helpers, which a policy check needs; the scheduler's
// explain engine.
var heavyAlone = []string{"sigs.k8s.io/descheduler/pkg/descheduler", "github.com/ballast-sched/ballast/scheduler/pkg/explain"}

func under(path, module string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// TestNoHeavyPackagesInTheBinary lists the packages ballast links.
func TestNoHeavyPackagesInTheBinary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, m := range heavy {
			if under(pkg, m) {
				t.Errorf("ballast links %s", pkg)
			}
		}
		for _, m := range heavyAlone {
			if pkg == m {
				t.Errorf("ballast links %s", pkg)
			}
		}
	}
}
