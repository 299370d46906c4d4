package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	c := NewCommand(log.New(&errOut), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	c.SetArgs(args)
	c.SetOut(&out)
	c.SetErr(&errOut)
	err := c.Execute()
	return out.String(), err
}

func TestList(t *testing.T) {
	out, err := run(t, "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"homelab-mixed", "memory-hog", "new-node", "request-skew"} {
		if !strings.Contains(out, name+"\n") {
			t.Errorf("--list lacks %s:\n%s", name, out)
		}
	}
}

func TestScenarioErrors(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nduration: 1m\nnodes: []\nworkloads: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"nothing", nil, "no scenario"},
		{"both", []string{bad, "--scenario", "new-node"}, "not several"},
		{"cluster and file", []string{bad, "--from-cluster"}, "not several"},
		{"unknown built-in", []string{"--scenario", "nope"}, `no built-in scenario "nope"`},
		{"invalid file", []string{bad}, "nodes"},
		{"duration below a step", []string{"--scenario", "new-node", "--duration", "5s"}, "shorter than the scenario's step"},
		{"missing policy", []string{"--scenario", "new-node", "--descheduler-policy", filepath.Join(t.TempDir(), "none.yaml")}, "reading the descheduler policy"},
		{"serve flag without --serve", []string{"--scenario", "new-node", "--scheduler", "none", "--speed", "2"}, "--scheduler, --speed need --serve"},
		{"run flag with --serve", []string{"--scenario", "new-node", "--serve", "--report", "x.html"}, "--report do not apply to --serve"},
		{"serve without kubeconfig", []string{"--scenario", "new-node", "--serve"}, "needs --kubeconfig-out"},
		{"bad descheduler", []string{"--scenario", "new-node", "--serve", "--kubeconfig-out", "k", "--descheduler", "maybe"}, `--descheduler "maybe"`},
		{"bad speed", []string{"--scenario", "new-node", "--serve", "--kubeconfig-out", "k", "--speed", "0"}, "--speed 0: must be positive"},
		{"bad scheduler", []string{"--scenario", "new-node", "--serve", "--kubeconfig-out", "k", "--scheduler", "fast"}, "serve.scheduler"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}
