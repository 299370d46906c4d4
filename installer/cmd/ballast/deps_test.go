package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// heavy are the modules the ballast binary must not carry: the simulator
// (behind `ballast sim`, a program of its own) and the Kubernetes control
// plane it links. They would take the binary from under 80 MiB to ~240.
var heavy = []string{"github.com/ballast-sched/ballast/simulator", "k8s.io/kubernetes"}

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

// TestNoSimulatorInGoMod reads the installer's go.mod: not even its tests
// may require the heavy modules (the integration tests are a module of
// their own, installer/test).
func TestNoSimulatorInGoMod(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json", "../../go.mod").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Require []struct{ Path string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("decoding go mod edit -json: %v", err)
	}
	if len(mod.Require) == 0 {
		t.Fatal("go.mod requires nothing: not the installer's go.mod")
	}
	for _, r := range mod.Require {
		for _, m := range heavy {
			if under(r.Path, m) {
				t.Errorf("installer/go.mod requires %s", r.Path)
			}
		}
	}
}
