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
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	kc "github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

type flagpole struct {
	Kube kube.Flags
	installation.Release
	Server   string
	File     string
	Secret   string
	Duration time.Duration
	Root     string
	Renew    bool
	// Output is empty for text, or json or yaml.
	Output string
}

// NewCommand returns the kubeconfig command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "kubeconfig COMPONENT",
		Short: "Create a kubeconfig for a component run outside the cluster (load-watcher, scheduler, descheduler)",
		Long: "Components in the cluster use their ServiceAccounts and need no kubeconfig. For one run elsewhere,\n" +
			"kubeconfig creates a dedicated ServiceAccount bound to that component's roles, requests a bound token and\n" +
			"stores a kubeconfig in a Secret (default) or a 0600 file (--file). Your own credentials are never copied, and\n" +
			"a Secret the command did not create is never overwritten.\n" +
			"A loopback server address (k3s.yaml's 127.0.0.1) is replaced by a control-plane node's InternalIP.\n" +
			"The token lasts --duration (30 days by default); `ballast status` warns a week before it ends, and\n" +
			"--renew gives every kubeconfig the command generated (or COMPONENT's) a new token, keeping its server:\n" +
			"the Secrets, and the files on this host. ballast uninstall deletes everything this command created.",
		Example: "  ballast kubeconfig load-watcher --file /etc/ballast/load-watcher.kubeconfig\n" +
			"  ballast kubeconfig scheduler --server https://192.168.1.10:6443\n" +
			"  ballast kubeconfig --renew",
		ValidArgs: charts.Components,
		Args: func(c *cobra.Command, args []string) error {
			if flags.Renew {
				return cobra.MaximumNArgs(1)(c, args)
			}
			if len(args) == 0 {
				return fmt.Errorf("name a component: one of %v (or renew with --renew)", charts.Components)
			}
			return cobra.ExactArgs(1)(c, args)
		},
		RunE: func(c *cobra.Command, args []string) error {
			component := ""
			if len(args) > 0 {
				component = args[0]
				if !slices.Contains(charts.Components, component) {
					return fmt.Errorf("unknown component %q: want one of %v", component, charts.Components)
				}
			}
			if flags.Renew {
				if c.Flags().Changed("file") || c.Flags().Changed("secret") || c.Flags().Changed("server") {
					return fmt.Errorf("--renew keeps where each kubeconfig is and its server: give --file, --secret or --server without --renew")
				}
				return renewE(c.Context(), logger, streams, flags, component, c.Flags().Changed("duration"))
			}
			return runE(c.Context(), logger, streams, flags, component)
		},
	}
	flags.Kube.AddFlags(c.Flags())
	flags.Release.AddFlags(c.Flags(), true)
	c.Flags().StringVar(&flags.Server, "server", "", "API server URL the component reaches (default: from your kubeconfig, loopback replaced)")
	c.Flags().StringVar(&flags.File, "file", "", "write the kubeconfig to this file (mode 0600) instead of a Secret")
	c.Flags().StringVar(&flags.Secret, "secret", "", "Secret to store it in (default <release>-<component>-kubeconfig); one the command did not create is refused")
	c.Flags().DurationVar(&flags.Duration, "duration", kc.DefaultDuration, "token lifetime (the API server may cap it); renew before it ends with --renew")
	c.Flags().BoolVar(&flags.Renew, "renew", false, "give the kubeconfigs the command generated (COMPONENT's, or all) new tokens: the Secrets, and the files on this host")
	c.Flags().StringVar(&flags.Root, "root", "/", "root of the host filesystem (for k3s's kubeconfig)")
	cli.AddOutputFlag(c.Flags(), &flags.Output, "where each kubeconfig is and when its token ends", func(v string) string {
		return "to write the kubeconfig to a file, use --file " + v
	})
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole, component string) error {
	getter := flags.Kube.Getter(flags.Namespace, k3s.HostPaths(flags.Root).Kubeconfig())
	clients, err := kube.Connect(ctx, getter)
	if err != nil {
		return err
	}
	restCfg, err := getter.ToRESTConfig()
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
	secret := flags.Secret
	if secret == "" {
		secret = kc.SecretName(flags.ReleaseName, component)
	}
	if flags.File == "" {
		// Before anything is created: a Secret of someone else's is never replaced.
		if err := kc.CheckSecret(ctx, clients.Kube, flags.Namespace, secret); err != nil {
			return err
		}
	}
	g, err := kc.Generate(ctx, kc.Options{
		Client: clients.Kube, Namespace: flags.Namespace, ReleaseName: flags.ReleaseName,
		Component: component, Server: server, CAData: caData, TLSServerName: restCfg.ServerName, Duration: flags.Duration,
	})
	if err != nil {
		return err
	}
	cred := kc.Credential{Component: component, ServiceAccount: g.ServiceAccount, Server: server, Expires: g.Expires, Duration: g.Duration}
	if flags.File != "" {
		if _, err := atomicfile.Write(flags.File, g.Kubeconfig, 0o600); err != nil {
			return err
		}
		host, _ := os.Hostname()
		if err := kc.RecordFile(ctx, clients.Kube, flags.Namespace, g, flags.File, host); err != nil {
			logger.Warnf("wrote %s, but could not record it on ServiceAccount %s, so ballast status will not warn before it ends: %v",
				flags.File, g.ServiceAccount, err)
		}
		cred.File, cred.Host = flags.File, host
	} else {
		if err := kc.StoreSecret(ctx, clients.Kube, flags.Namespace, secret, flags.ReleaseName, component, g); err != nil {
			return err
		}
		cred.Secret = flags.Namespace + "/" + secret
	}
	if flags.Output != "" {
		return cli.WriteDocument(streams.Out, cred, flags.Output)
	}
	logger.V(1).Infof("token for %s lasts up to %s", g.ServiceAccount, flags.Duration)
	if flags.File != "" {
		fmt.Fprintf(streams.Out, "Wrote %s (ServiceAccount %s/%s, server %s); its token ends %s.\n",
			flags.File, flags.Namespace, g.ServiceAccount, server, when(g.Expires))
	} else {
		fmt.Fprintf(streams.Out, "Stored the kubeconfig in Secret %s/%s, key %q (ServiceAccount %s, server %s); its token ends %s.\n",
			flags.Namespace, secret, kc.SecretKey, g.ServiceAccount, server, when(g.Expires))
	}
	fmt.Fprintf(streams.Out, "Renew it before then with: %s\n", cred.RenewCommand(flags.Namespace, flags.ReleaseName))
	return nil
}

// renewE renews the kubeconfigs the command generated.
func renewE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole, component string, durationSet bool) error {
	getter := flags.Kube.Getter(flags.Namespace, k3s.HostPaths(flags.Root).Kubeconfig())
	clients, err := kube.Connect(ctx, getter)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	o := kc.RenewOptions{Client: clients.Kube, Namespace: flags.Namespace, ReleaseName: flags.ReleaseName, Component: component, Host: host}
	if durationSet {
		o.Duration = flags.Duration
	}
	renewed, err := kc.Renew(ctx, o)
	if flags.Output != "" && err == nil {
		return cli.WriteDocument(streams.Out, renewed, flags.Output)
	}
	if len(renewed) == 0 && err == nil {
		fmt.Fprintf(streams.Out, "No kubeconfig generated by ballast kubeconfig for release %s in namespace %s; nothing to renew.\n",
			flags.ReleaseName, flags.Namespace)
		return nil
	}
	for _, r := range renewed {
		if r.Skipped != "" {
			fmt.Fprintf(streams.Out, "Left the kubeconfig of %s in %s: %s.\n", r.Component, r.Where(), r.Skipped)
			continue
		}
		fmt.Fprintf(streams.Out, "Renewed the kubeconfig of %s in %s: its token ends %s.\n", r.Component, r.Where(), when(r.Expires))
	}
	return err
}

// when says when a token ends, in UTC.
func when(t time.Time) string {
	if t.IsZero() {
		return "when the API server says"
	}
	return t.UTC().Format("2006-01-02 15:04 MST")
}
