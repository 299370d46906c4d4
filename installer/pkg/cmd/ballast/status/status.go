// Package status implements `ballast status`: component health, load-watcher
// freshness and a per-node table of real usage.
package status

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/health"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// NewCommand returns the status command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &installation.Flags{}
	c := &cobra.Command{
		Use:   "status",
		Short: "Show Ballast's health and the real cpu/memory usage of every node",
		Long: "status exits non-zero when a component is not ready or load-watcher has no usage to serve, whatever the output format.\n" +
			"It reads load-watcher's port, TLS and the scheduler's staleness limit from the release's values (the chart's defaults without a release).\n" +
			"It lists the kubeconfigs `ballast kubeconfig` generated, and warns a week before one's token ends, with the command that renews it.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runE(c.Context(), logger, streams, flags)
		},
	}
	flags.AddFlags(c.Flags(), 30*time.Second, true)
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *installation.Flags) error {
	if err := cli.CheckOutput(flags.Output); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, flags.Timeout)
	defer cancel()
	paths := flags.Host.Paths()
	getter := flags.Getter()
	clients, err := kube.Connect(ctx, getter)
	if err != nil {
		return err
	}
	restConfig, err := getter.ToRESTConfig()
	if err != nil {
		return err
	}
	lw, err := health.LoadWatcherOfRelease(logger, getter, flags.ReleaseName, flags.Namespace, flags.LoadWatcherPort)
	if err != nil {
		return err
	}
	opts := health.Options{
		Client: clients.Kube, RestConfig: restConfig, Namespace: flags.Namespace, ReleaseName: flags.ReleaseName, LoadWatcher: lw,
	}
	server := k3s.DetectHost(paths).Server
	if server {
		if opts.LocalNode, err = flags.Host.Node(); err != nil {
			logger.Warnf("cannot tell this server's node name: %v", err)
		}
		opts.LocalDropIn = paths.DropInWritten()
	}
	r := health.Collect(ctx, opts)
	healthy := r.Healthy()
	if !healthy && server {
		// On k3s, helm-controller may still be at work: say where it is.
		r.HelmController = k3s.InstallJobState(ctx, clients.Kube)
	}
	if err := write(streams.Out, r, flags.Output); err != nil {
		return err
	}
	for _, w := range r.Warnings() {
		logger.Warnf("%s", w)
	}
	if !healthy {
		if flags.Output != "" {
			return errors.New("Ballast is not healthy (see problems)")
		}
		return errors.New("Ballast is not healthy (see above)")
	}
	logger.V(1).Infof("all components ready")
	return nil
}
