// Package status implements `ballast status`: component health, load-watcher
// freshness and a per-node table of real usage.
package status

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/health"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

type flagpole struct {
	Kube            kube.Flags
	Namespace       string
	ReleaseName     string
	LoadWatcherPort int
	Host            k3s.HostFlags
	Timeout         time.Duration
}

// NewCommand returns the status command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "status",
		Short: "Show Ballast's health and the real cpu/memory usage of every node",
		Long:  "status exits non-zero when a component is not ready or load-watcher has no usage to serve.",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runE(c.Context(), logger, streams, flags)
		},
	}
	flags.Kube.AddFlags(c.Flags())
	c.Flags().StringVarP(&flags.Namespace, "namespace", "n", charts.DefaultNamespace, "namespace Ballast runs in")
	c.Flags().StringVar(&flags.ReleaseName, "release-name", charts.DefaultReleaseName, "Helm release name")
	c.Flags().IntVar(&flags.LoadWatcherPort, "load-watcher-port", 2020, "port of the load-watcher Service")
	flags.Host.AddFlags(c.Flags())
	c.Flags().DurationVar(&flags.Timeout, "timeout", 30*time.Second, "how long to wait for the API")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole) error {
	ctx, cancel := context.WithTimeout(ctx, flags.Timeout)
	defer cancel()
	paths := flags.Host.Paths()
	getter := flags.Kube.Getter(flags.Namespace, paths.Kubeconfig())
	clients, err := kube.NewClients(getter)
	if err != nil {
		return err
	}
	restConfig, err := getter.ToRESTConfig()
	if err != nil {
		return err
	}
	opts := health.Options{
		Client: clients.Kube, RestConfig: restConfig, Namespace: flags.Namespace, ReleaseName: flags.ReleaseName, LoadWatcherPort: flags.LoadWatcherPort,
	}
	server := k3s.DetectHost(paths).Server
	if server {
		if opts.LocalNode, err = flags.Host.Node(); err != nil {
			logger.Warnf("cannot tell this server's node name: %v", err)
		}
		opts.LocalDropIn = paths.DropInWritten()
	}
	r := health.Collect(ctx, opts)
	if err := r.Print(streams.Out); err != nil {
		return err
	}
	if !r.Healthy() {
		// On k3s, helm-controller may still be at work: say where it is.
		if server {
			fmt.Fprintf(streams.Out, "\nk3s's helm-controller: %s\n", k3s.InstallJobState(ctx, clients.Kube))
		}
		return errors.New("Ballast is not healthy (see above)")
	}
	logger.V(1).Infof("all components ready")
	return nil
}
