package integration

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/descheduler/cmd/ballast-descheduler/app"
)

// The binary refuses to start on invalid plugin args, naming the field,
// against a real API server.
func TestStartFailsOnInvalidPolicyArgs(t *testing.T) {
	e := newEnv(t, nodeSpec("node-a", false), nodeSpec("node-b", false))
	policy := e.writePolicy(balancePolicy("          maxEvictionsPerCycle: 0", "          lowThresholds: {memory: 95}"))
	cmd := app.NewCommand(io.Discard)
	cmd.SetArgs([]string{"--policy-config-file", policy, "--kubeconfig", e.c.KubeconfigPath(),
		"--secure-port=0", "--load-watcher-address=http://127.0.0.1:1"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, cancel := context.WithCancel(e.ctx)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		t.Fatal("ballast-descheduler started with invalid args")
	}
	for _, field := range []string{"maxEvictionsPerCycle", "lowThresholds[memory]"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("error %q does not name %s", err, field)
		}
	}
}
