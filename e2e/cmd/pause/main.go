// Command pause is the pod sandbox process of the end-to-end lane's node: the
// program the sandbox ("pause") image runs to hold a pod's namespaces open.
//
// Like Kubernetes's own pause, it sleeps until SIGTERM or SIGINT and then
// exits 0, and when it runs as PID 1 of a shared PID namespace it reaps the
// orphans reparented to it. It is a static Go binary so the image needs
// nothing else, FROM scratch.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	reap := func() {}
	if os.Getpid() == 1 {
		reap = reapChildren
	} else {
		fmt.Fprintln(os.Stderr, "pause: not PID 1, so orphans are not reaped here")
	}
	sig := wait(sigs, reap)
	fmt.Fprintf(os.Stderr, "pause: %v, exiting\n", sig)
}

// wait returns the first SIGTERM or SIGINT from sigs, calling reap on every
// SIGCHLD before it.
func wait(sigs <-chan os.Signal, reap func()) os.Signal {
	for sig := range sigs {
		if sig == syscall.SIGCHLD {
			reap()
			continue
		}
		return sig
	}
	return nil
}

// reapChildren collects every child that has exited. Signals coalesce, so one
// SIGCHLD can stand for several children.
func reapChildren() {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
