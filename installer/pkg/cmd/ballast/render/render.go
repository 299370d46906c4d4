// Package render implements `ballast render`: the manifests `helm template`
// would produce, for GitOps.
package render

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/startcheck"
)

type flagpole struct {
	Values values.Options
	installation.Release
	KubeVersion string
	Archive     bool
}

// NewCommand returns the render command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "render",
		Short: "Print Ballast's manifests for the given values (like helm template)",
		Example: "  ballast render -f my-values.yaml > ballast.yaml\n" +
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
	logger.V(1).Infof("rendered release %s into namespace %s", flags.ReleaseName, flags.Namespace)
	_, err = fmt.Fprint(streams.Out, manifest)
	return err
}
