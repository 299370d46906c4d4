package integration

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/app"
)

// TestRenderValidate runs `ballast render --validate` against a real API
// server: what it accepts is printed, and what only the cluster can refuse
// (a priority class it does not have, a kind it does not serve) fails the
// command with the API server's own words, printing no manifest.
func TestRenderValidate(t *testing.T) {
	c, ctx := startCluster(t)
	run := func(args ...string) (string, string, error) {
		var out, errOut bytes.Buffer
		err := app.Run(log.New(&errOut), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
			append([]string{"render", "--validate", "--kubeconfig", c.KubeconfigPath()}, args...))
		return out.String(), errOut.String(), err
	}

	t.Run("namespace not there yet", func(t *testing.T) {
		out, errOut, err := run()
		if err != nil {
			t.Fatalf("refused: %v\n%s", err, errOut)
		}
		if !strings.Contains(out, "kind: Deployment") {
			t.Error("no manifest printed")
		}
		wantLines(t, "stderr", errOut, "Server-side dry run: the API server accepts",
			"Not sent, checked offline only:", "namespace "+charts.DefaultNamespace+" does not exist yet")
	})

	createNamespace(t, ctx, c.Client, charts.DefaultNamespace)
	t.Run("defaults", func(t *testing.T) {
		out, errOut, err := run()
		if err != nil {
			t.Fatalf("refused: %v\n%s", err, errOut)
		}
		if !strings.Contains(out, "kind: Deployment") {
			t.Error("no manifest printed")
		}
		wantLines(t, "stderr", errOut, "and the pods of 3 Deployments.")
		if strings.Contains(errOut, "Not sent") || strings.Contains(errOut, "refused") {
			t.Errorf("not everything was judged:\n%s", errOut)
		}
	})

	t.Run("a priority class the cluster does not have", func(t *testing.T) {
		out, errOut, err := run("--set", "descheduler.priorityClassName=homelab-critical")
		if err == nil || !strings.Contains(err.Error(), "Pod "+charts.DefaultNamespace+"/ballast-descheduler-") ||
			!strings.Contains(err.Error(), "homelab-critical") {
			t.Fatalf("want the pod refused for its priority class, got %v\n%s", err, errOut)
		}
		if out != "" {
			t.Errorf("a manifest was printed:\n%.200s", out)
		}
	})

	t.Run("a kind the cluster does not serve", func(t *testing.T) {
		_, errOut, err := run("--set", "scheduler.serviceMonitor.enabled=true")
		if err == nil || !strings.Contains(err.Error(), "does not serve monitoring.coreos.com/v1 ServiceMonitor") {
			t.Fatalf("want the ServiceMonitor refused, got %v\n%s", err, errOut)
		}
	})

	t.Run("refused before the cluster is asked", func(t *testing.T) {
		_, errOut, err := run("--set", "global.schedulerMode=replaceDefault", "--set", "scheduler.enabled=false")
		if err == nil || !strings.Contains(err.Error(), "global.schedulerMode=replaceDefault with scheduler.enabled=false") {
			t.Fatalf("want the chart's refusal, got %v", err)
		}
		if strings.Contains(errOut, "Server-side dry run") {
			t.Errorf("the cluster was asked:\n%s", errOut)
		}
	})
}
