// Package install implements `ballast install`: a HelmChart manifest on a k3s
// server, a Helm SDK install everywhere else.
package install

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/cmd"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/internal/cli"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/kube"
	"github.com/ballast-sched/ballast/installer/pkg/log"
	"github.com/ballast-sched/ballast/installer/pkg/preflight"
	"github.com/ballast-sched/ballast/installer/pkg/values"
)

type flagpole struct {
	Values    values.Options
	Kube      kube.Flags
	Namespace string
	Mode      string
	// ModeSet is true when --mode was given; otherwise global.schedulerMode in the values decides.
	ModeSet bool
	Helm    bool
	Root    string
	// DataDir is k3s's --data-dir on the host.
	DataDir string
	Timeout time.Duration
}

// NewCommand returns the install command.
func NewCommand(logger *log.Logger, streams cmd.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "install",
		Short: "Install or upgrade Ballast (k3s: as a HelmChart manifest; elsewhere: with Helm)",
		Long: "On a k3s server, install writes a HelmChart carrying the embedded chart into k3s's auto-deploy\n" +
			"directory (works offline; run it as root). Anywhere else, or with --helm, it installs or upgrades the\n" +
			"Helm release through your kubeconfig and waits for the rollout. Running it again with the same values\n" +
			"changes nothing.",
		Example: "  sudo ballast install\n" +
			"  sudo ballast install --mode replaceDefault      # on every k3s server, then restart k3s\n" +
			"  ballast install --helm --kubeconfig ~/.kube/config -f values.yaml --set descheduler.dryRun=true",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			flags.ModeSet = c.Flags().Changed("mode")
			return runE(c.Context(), logger, streams, flags)
		},
	}
	flags.Values.AddFlags(c.Flags())
	flags.Kube.AddFlags(c.Flags())
	c.Flags().StringVarP(&flags.Namespace, "namespace", "n", charts.DefaultNamespace, "namespace of Ballast's objects")
	c.Flags().StringVar(&flags.Mode, "mode", string(k3s.ModeSecond), "second (workloads opt in with schedulerName) or replaceDefault (Ballast schedules every pod; see docs/k3s.md)")
	c.Flags().BoolVar(&flags.Helm, "helm", false, "install through the Helm SDK even on a k3s server")
	c.Flags().StringVar(&flags.Root, "root", "/", "root of the host filesystem holding k3s's files")
	c.Flags().StringVar(&flags.DataDir, "k3s-data-dir", k3s.DefaultDataDir, "k3s's --data-dir")
	c.Flags().DurationVar(&flags.Timeout, "timeout", 5*time.Minute, "how long a Helm install waits for Ballast to be ready")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cmd.IOStreams, flags *flagpole) error {
	vals, err := flags.Values.Merge()
	if err != nil {
		return err
	}
	mode, err := schedulerMode(flags, vals)
	if err != nil {
		return err
	}
	paths := k3s.HostPaths(flags.Root)
	paths.DataDir = flags.DataDir
	host := k3s.DetectHost(paths)
	logger.V(1).Infof("k3s on this host: server=%t agent=%t evidence=%v", host.Server, host.Agent, host.Evidence)

	getter := flags.Kube.Getter(flags.Namespace, paths.Kubeconfig())
	clients, clientErr := kube.NewClients(getter)
	if clientErr == nil {
		clientErr = preflightCluster(ctx, logger, clients, vals)
	}

	if host.Server && !flags.Helm {
		if clientErr != nil {
			logger.Warnf("cannot reach the cluster (%v); writing the HelmChart anyway, k3s applies it when it runs", clientErr)
		}
		return installK3s(ctx, logger, streams, paths, flags, mode, vals)
	}
	if host.Agent && !flags.Helm {
		logger.Infof("this host is a k3s agent; installing through the API instead (a server would take a HelmChart)")
	}
	if clientErr != nil {
		return fmt.Errorf("connect to the cluster: %w", clientErr)
	}
	return installHelm(ctx, logger, streams, clients, getter, flags, mode, vals)
}

// schedulerMode reconciles --mode with global.schedulerMode from the values;
// the host files depend on it, so the two must not disagree.
func schedulerMode(flags *flagpole, vals map[string]any) (k3s.Mode, error) {
	mode := k3s.Mode(flags.Mode)
	if mode != k3s.ModeSecond && mode != k3s.ModeReplaceDefault {
		return "", fmt.Errorf("--mode=%s: want %s or %s", flags.Mode, k3s.ModeSecond, k3s.ModeReplaceDefault)
	}
	g, _ := vals["global"].(map[string]any)
	fromValues, ok := g["schedulerMode"].(string)
	switch {
	case !ok || k3s.Mode(fromValues) == mode:
		return mode, nil
	case !flags.ModeSet:
		return k3s.Mode(fromValues), nil
	default:
		return "", fmt.Errorf("--mode=%s contradicts global.schedulerMode=%s in the values: give one of them", mode, fromValues)
	}
}

// preflightCluster reports what the cluster is and whether metrics-server serves usage.
func preflightCluster(ctx context.Context, logger *log.Logger, clients *kube.Clients, vals map[string]any) error {
	nodes, err := clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{Limit: 50})
	if err != nil {
		return err
	}
	if isK3s, why := k3s.ClusterIsK3s(nodes.Items); isK3s {
		logger.V(1).Infof("cluster runs k3s: %s", why)
	}
	if provider(vals) == "metrics-server" {
		if err := preflight.MetricsServer(ctx, clients.Dynamic); err != nil {
			logger.Warnf("load-watcher reads metrics-server by default, but %v", err)
		}
	}
	return nil
}

func provider(vals map[string]any) string {
	if lw, ok := vals["load-watcher"].(map[string]any); ok {
		if p, ok := lw["provider"].(string); ok {
			return p
		}
	}
	return "metrics-server"
}

func installK3s(ctx context.Context, logger *log.Logger, streams cmd.IOStreams, paths k3s.Paths, flags *flagpole, mode k3s.Mode, vals map[string]any) error {
	status := cli.NewStatus(logger)
	status.Start("Validating values and writing the HelmChart")
	res, err := k3s.Installer{Paths: paths}.Install(ctx, k3s.InstallOptions{Values: vals, Namespace: flags.Namespace, Mode: mode})
	status.End(err == nil)
	if err != nil {
		return err
	}
	if res.ManifestChanged {
		fmt.Fprintf(streams.Out, "Wrote %s; k3s's helm-controller installs Ballast into namespace %s shortly.\n", res.Manifest, flags.Namespace)
	} else {
		fmt.Fprintf(streams.Out, "%s is already up to date; nothing changed.\n", res.Manifest)
	}
	if mode == k3s.ModeReplaceDefault {
		fmt.Fprintf(streams.Out, "Replace mode: run this same command on every k3s server.\n")
	}
	if res.RestartK3s {
		fmt.Fprintf(streams.Out, "The k3s scheduler configuration changed: restart k3s on this server (sudo systemctl restart k3s,\n"+
			"or rc-service k3s restart on OpenRC). Until then Ballast's own pods wait in Pending.\n")
	}
	fmt.Fprintf(streams.Out, "Check progress with: ballast status -n %s\n", flags.Namespace)
	return nil
}

func installHelm(ctx context.Context, logger *log.Logger, streams cmd.IOStreams, clients *kube.Clients, getter genericclioptions.RESTClientGetter, flags *flagpole, mode k3s.Mode, vals map[string]any) error {
	if mode == k3s.ModeReplaceDefault {
		vals = setGlobal(vals, "schedulerMode", string(k3s.ModeReplaceDefault))
		logger.Warnf("replaceDefault outside a k3s server: your cluster's own scheduler must already serve only %q "+
			"(docs/k3s.md explains the profile rename), or Ballast's pods will never be scheduled", k3s.DefaultBootstrapSchedulerName)
	}
	status := cli.NewStatus(logger)
	status.Start("Validating values")
	if _, _, err := charts.Render(ctx, charts.RenderOptions{Namespace: flags.Namespace, Values: vals}); err != nil {
		status.End(false)
		return fmt.Errorf("invalid values, nothing installed: %w", err)
	}
	status.End(true)

	status.Start(fmt.Sprintf("Installing Ballast into namespace %s", flags.Namespace))
	rel, upgraded, err := helminstall.InstallOrUpgrade(ctx, helminstall.Options{
		Getter:      getter,
		Client:      clients.Kube,
		ReleaseName: charts.DefaultReleaseName,
		Namespace:   flags.Namespace,
		Values:      vals,
		Timeout:     flags.Timeout,
		Progress:    status.Update,
		Debugf:      logger.V(2).Infof,
	})
	status.End(err == nil)
	if err != nil {
		return err
	}
	verb := "Installed"
	if upgraded {
		verb = "Upgraded"
	}
	fmt.Fprintf(streams.Out, "%s Ballast (release %s, revision %d) in namespace %s.\n", verb, rel.Name, rel.Version, rel.Namespace)
	if rel.Info != nil && rel.Info.Notes != "" {
		fmt.Fprintln(streams.Out)
		fmt.Fprintln(streams.Out, rel.Info.Notes)
	}
	return nil
}

func setGlobal(vals map[string]any, key string, value any) map[string]any {
	out := make(map[string]any, len(vals)+1)
	for k, v := range vals {
		out[k] = v
	}
	g := map[string]any{}
	if old, ok := out["global"].(map[string]any); ok {
		for k, v := range old {
			g[k] = v
		}
	}
	g[key] = value
	out["global"] = g
	return out
}
