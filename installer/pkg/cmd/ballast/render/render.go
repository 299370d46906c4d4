// Package render implements `ballast render`: the manifests `helm template`
// would produce, for GitOps, checked as `ballast install` checks them; with
// --validate, judged by the cluster's API server too (a server-side dry run).
package render

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/dryrun"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/startcheck"
)

type flagpole struct {
	Values values.Options
	installation.Release
	KubeVersion string
	Archive     bool
	// Validate has the cluster's API server judge the objects too.
	Validate bool
	Kube     kube.Flags
}

// NewCommand returns the render command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "render",
		Short: "Print Ballast's manifests for the given values (like helm template)",
		Long: "Render prints the objects Ballast's chart makes from the values, after the checks `ballast install` runs:\n" +
			"the API server's rules for the fields values reach, each component's own start-up checks, and what the\n" +
			"objects would do together (a cluster left with no scheduler, a scheduler with no usage). With --validate,\n" +
			"the cluster's API server judges them too, as a server-side dry run: nothing is written.",
		Example: "  ballast render -f my-values.yaml > ballast.yaml\n" +
			"  ballast render -f my-values.yaml --validate > ballast.yaml    # the cluster's API server judges them too\n" +
			"  ballast render --archive > ballast-chart.tgz",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runE(c, logger, streams, flags)
		},
	}
	flags.Values.AddFlags(c.Flags())
	flags.Release.AddFlags(c.Flags(), true)
	c.Flags().StringVar(&flags.KubeVersion, "kube-version", charts.DefaultKubeVersion, "Kubernetes version templates assume")
	c.Flags().BoolVar(&flags.Archive, "archive", false, "print the embedded chart as a .tgz instead (for helm install or air-gapped hosts)")
	c.Flags().BoolVar(&flags.Validate, "validate", false, "have the cluster's API server judge the objects too, as a server-side dry run (nothing is written); needs a reachable cluster")
	flags.Kube.AddFlags(c.Flags())
	return c
}

func runE(c *cobra.Command, logger *log.Logger, streams cli.IOStreams, flags *flagpole) error {
	if flags.Archive {
		tgz, err := charts.Archive()
		if err != nil {
			return err
		}
		_, err = streams.Out.Write(tgz)
		return err
	}
	vals, err := flags.Values.Merge()
	if err != nil {
		return err
	}
	manifest, _, err := startcheck.Render(c.Context(), charts.RenderOptions{
		ReleaseName: flags.ReleaseName,
		Namespace:   flags.Namespace,
		Values:      vals,
		KubeVersion: flags.KubeVersion,
	})
	if err != nil {
		return err
	}
	if flags.Validate {
		getter := flags.Kube.Getter(flags.Namespace, k3s.HostPaths("/").Kubeconfig())
		verdicts, err := dryrun.Manifest(c.Context(), getter, flags.Namespace, manifest)
		if err != nil {
			return fmt.Errorf("server-side dry run: %w", err)
		}
		dryrun.Write(streams.ErrOut, verdicts)
		if err := dryrun.Refused(verdicts); err != nil {
			return err
		}
	}
	logger.V(1).Infof("rendered release %s into namespace %s", flags.ReleaseName, flags.Namespace)
	_, err = fmt.Fprint(streams.Out, manifest)
	return err
}
