// Package kubeconfig implements `ballast kubeconfig`: credentials for a
// component that runs outside the cluster, bound to its least-privilege roles.
package kubeconfig

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/atomicfile"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	kc "github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

type flagpole struct {
	Kube        kube.Flags
	Namespace   string
	ReleaseName string
	Server      string
	Output      string
	Secret      string
	Duration    time.Duration
	Root        string
}

// NewCommand returns the kubeconfig command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "kubeconfig COMPONENT",
		Short: "Create a kubeconfig for a component run outside the cluster (load-watcher, scheduler, descheduler)",
		Long: "Components in the cluster use their ServiceAccounts and need no kubeconfig. For one run elsewhere,\n" +
			"kubeconfig creates a dedicated ServiceAccount bound to that component's roles, requests a bound token and\n" +
			"stores a kubeconfig in a Secret (default) or a 0600 file. Your own credentials are never copied.\n" +
			"A loopback server address (k3s.yaml's 127.0.0.1) is replaced by a control-plane node's InternalIP.\n" +
			"The token lasts --duration (30 days by default); running the command again rotates it, and\n" +
			"ballast uninstall deletes everything this command created.",
		Example: "  ballast kubeconfig load-watcher --output /etc/ballast/load-watcher.kubeconfig\n" +
			"  ballast kubeconfig scheduler --server https://192.168.1.10:6443",
		Args:      cobra.ExactArgs(1),
		ValidArgs: charts.Components,
		RunE: func(c *cobra.Command, args []string) error {
			return runE(c.Context(), logger, streams, flags, args[0])
		},
	}
	flags.Kube.AddFlags(c.Flags())
	c.Flags().StringVarP(&flags.Namespace, "namespace", "n", charts.DefaultNamespace, "namespace Ballast runs in")
	c.Flags().StringVar(&flags.ReleaseName, "release-name", charts.DefaultReleaseName, "Helm release name")
	c.Flags().StringVar(&flags.Server, "server", "", "API server URL the component reaches (default: from your kubeconfig, loopback replaced)")
	c.Flags().StringVarP(&flags.Output, "output", "o", "", "write the kubeconfig to this file (mode 0600) instead of a Secret")
	c.Flags().StringVar(&flags.Secret, "secret", "", "Secret to store it in (default <release>-<component>-kubeconfig)")
	c.Flags().DurationVar(&flags.Duration, "duration", kc.DefaultDuration, "token lifetime (the API server may cap it); run the command again before it ends to rotate the token")
	c.Flags().StringVar(&flags.Root, "root", "/", "root of the host filesystem (for k3s's kubeconfig)")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole, component string) error {
	if !slices.Contains(charts.Components, component) {
		return fmt.Errorf("unknown component %q: want one of %v", component, charts.Components)
	}
	getter := flags.Kube.Getter(flags.Namespace, k3s.HostPaths(flags.Root).Kubeconfig())
	restCfg, err := getter.ToRESTConfig()
	if err != nil {
		return err
	}
	clients, err := kube.NewClients(getter)
	if err != nil {
		return err
	}
	server := flags.Server
	if server == "" {
		host := ""
		if addr, err := kc.NodeAddress(ctx, clients.Kube); err == nil {
			host = addr
		}
		if server, err = kc.ReachableServer(restCfg.Host, host); err != nil {
			return err
		}
	}
	caData := restCfg.CAData
	if len(caData) == 0 && restCfg.CAFile != "" {
		if caData, err = os.ReadFile(restCfg.CAFile); err != nil {
			return fmt.Errorf("read CA file: %w", err)
		}
	}
	data, err := kc.Generate(ctx, kc.Options{
		Client: clients.Kube, Namespace: flags.Namespace, ReleaseName: flags.ReleaseName,
		Component: component, Server: server, CAData: caData, TLSServerName: restCfg.ServerName, Duration: flags.Duration,
	})
	if err != nil {
		return err
	}
	sa := kc.ServiceAccountName(flags.ReleaseName, component)
	if flags.Output != "" {
		if _, err := atomicfile.Write(flags.Output, data, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(streams.Out, "Wrote %s (ServiceAccount %s/%s, server %s).\n", flags.Output, flags.Namespace, sa, server)
		return nil
	}
	name := flags.Secret
	if name == "" {
		name = charts.ComponentFullname(flags.ReleaseName, component) + "-kubeconfig"
	}
	if err := kc.StoreSecret(ctx, clients.Kube, flags.Namespace, name, component, data); err != nil {
		return err
	}
	logger.V(1).Infof("token for %s lasts up to %s", sa, flags.Duration)
	fmt.Fprintf(streams.Out, "Stored the kubeconfig in Secret %s/%s, key %q (ServiceAccount %s, server %s).\n",
		flags.Namespace, name, kc.SecretKey, sa, server)
	return nil
}
