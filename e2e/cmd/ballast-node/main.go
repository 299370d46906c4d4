// Command ballast-node is the init process of the end-to-end lane's real
// node, the part a kind node container's entrypoint plays: it moves itself
// into the node's own cgroup, enters the node's network namespace and new
// cgroup and mount namespaces, mounts the cgroup hierarchies afresh so the
// node's cgroup is their root, then starts the node's daemons (containerd,
// kubelet, kube-proxy) one after another and supervises them.
//
// The kubelet therefore measures the node, not the whole machine: its root
// cgroup is the node's, as on a node that runs in a container. Every mount the
// daemons make lives in the node's mount namespace and goes with it, and on
// SIGTERM everything left in the node's cgroups is killed, so a stopped node
// leaves no process behind.
//
// Usage: ballast-node SPEC.json. The spec (see Spec) is written by the lane.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/ballast-sched/ballast/e2e/pkg/nodeinit"
)

// stage2Env marks the re-executed process that already runs inside the
// node's namespaces.
const stage2Env = "BALLAST_NODE_STAGE2"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ballast-node:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: ballast-node SPEC.json")
	}
	raw, err := os.ReadFile(os.Args[1])
	if err != nil {
		return fmt.Errorf("reading the node spec: %w", err)
	}
	var spec nodeinit.Spec
	if err := json.Unmarshal(raw, &spec); err != nil {
		return fmt.Errorf("parsing the node spec %s: %w", os.Args[1], err)
	}
	if err := spec.Validate(); err != nil {
		return err
	}
	if os.Getenv(stage2Env) == "" {
		return enter(spec)
	}
	return nodeinit.Run(spec)
}

// enter joins the node's cgroups, then replaces this process by itself in
// the node's network namespace and in new cgroup and mount namespaces, with
// util-linux's nsenter and unshare (a Go program cannot safely change its
// own mount namespace: the runtime's threads share it).
func enter(spec nodeinit.Spec) error {
	if err := nodeinit.JoinCgroup(spec.Cgroup); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program: %w", err)
	}
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return fmt.Errorf("ballast-node needs util-linux's nsenter: %w", err)
	}
	unshare, err := exec.LookPath("unshare")
	if err != nil {
		return fmt.Errorf("ballast-node needs util-linux's unshare: %w", err)
	}
	argv := []string{"nsenter", "--net=" + spec.NetNS, "--",
		unshare, "--cgroup", "--mount", "--propagation", "slave", "--",
		self, os.Args[1]}
	env := append(os.Environ(), stage2Env+"=1")
	if err := syscall.Exec(nsenter, argv, env); err != nil {
		return fmt.Errorf("entering the node's namespaces: %w", err)
	}
	return nil
}
