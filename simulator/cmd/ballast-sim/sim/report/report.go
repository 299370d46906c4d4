// Package report implements `ballast sim report`: the summary table of the
// placement on a cluster served by `ballast sim --serve`.
package report

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	engine "github.com/ballast-sched/ballast/simulator/sim"
	"github.com/ballast-sched/ballast/simulator/sim/record"
	simreport "github.com/ballast-sched/ballast/simulator/sim/report"
)

type flagpole struct {
	Kube        kube.Flags
	LoadWatcher string
	JSON        bool
}

// NewCommand returns the report command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "report --kubeconfig FILE",
		Short: "Print the placement on a cluster served by `ballast sim --serve`",
		Long: "report measures the cluster as it is now: pods and requests from the API server, real usage from\n" +
			"load-watcher's /api/v1/usage (the mean over 5 minutes). It finds load-watcher through the ConfigMap\n" +
			record.InfoNamespace + "/" + record.InfoName + " the served cluster publishes, or at --load-watcher.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runE(c.Context(), logger, streams, flags)
		},
	}
	flags.Kube.AddFlags(c.Flags())
	c.Flags().StringVar(&flags.LoadWatcher, "load-watcher", "", "load-watcher's base URL (default: the one the served cluster publishes)")
	c.Flags().BoolVar(&flags.JSON, "json", false, "print the placement as JSON instead of tables")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole) error {
	cfg, err := flags.Kube.Getter("", "").ToRESTConfig()
	if err != nil {
		return fmt.Errorf("reading the kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the Kubernetes client: %w", err)
	}
	logger.V(1).Infof("Measuring the cluster at %s…", cfg.Host)
	p, err := engine.Report(ctx, client, flags.LoadWatcher)
	if err != nil {
		return err
	}
	return Print(streams.Out, p, flags.JSON)
}

// Print writes a placement as tables, or as JSON when asJSON.
func Print(out io.Writer, p *record.Placement, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	}
	return simreport.WritePlacement(out, p)
}
