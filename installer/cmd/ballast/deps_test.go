package main

import (
	"os/exec"
	"strings"
	"testing"
)

// heavy are the packages the ballast binary must not carry: the simulator
// (behind `ballast sim`, a program of its own), the in-process cluster, and
// the Kubernetes control plane and etcd server they link; they would add
// ~100 MiB more. The binary does carry kube-scheduler's and the
// descheduler's own configuration code and scheduling framework: `ballast
// render` and `install` check values with the components' own start-up
// checks, and `ballast explain` runs the scheduler's profile (97 MiB as
// released, 53 MiB before; docs/performance.md#cli). They share its module;
// what a binary links is what its packages import.
var heavy = []string{
	"github.com/ballast-sched/ballast/simulator",
	"github.com/ballast-sched/ballast/cluster",
	"k8s.io/kubernetes/cmd/kube-apiserver",
	"k8s.io/kubernetes/cmd/kube-controller-manager",
	"k8s.io/kubernetes/pkg/controlplane",
	"k8s.io/kubernetes/pkg/controller",
	"go.etcd.io/etcd/server",
}

func under(path, module string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// TestNoSimulatorInTheBinary lists the packages ballast links.
func TestNoSimulatorInTheBinary(t *testing.T) {
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
	}
}
