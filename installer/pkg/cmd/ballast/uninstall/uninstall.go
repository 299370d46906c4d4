// Package uninstall implements `ballast uninstall`: remove the release through
// the API, then Ballast's k3s host files.
package uninstall

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

type flagpole struct {
	Kube      kube.Flags
	Namespace string
	Helm      bool
	Host      k3s.HostFlags
	Timeout   time.Duration
}

// NewCommand returns the uninstall command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove Ballast and undo every host change ballast install made",
		Long: "On a k3s server, uninstall deletes the HelmChart through the API (helm-controller then removes the\n" +
			"release), then the manifest file and any scheduler drop-in, and says whether k3s must restart.\n" +
			"Elsewhere, or with --helm, it uninstalls the Helm release.",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runE(c.Context(), logger, streams, flags)
		},
	}
	flags.Kube.AddFlags(c.Flags())
	c.Flags().StringVarP(&flags.Namespace, "namespace", "n", charts.DefaultNamespace, "namespace Ballast was installed into")
	c.Flags().BoolVar(&flags.Helm, "helm", false, "uninstall the Helm release even on a k3s server")
	flags.Host.AddFlags(c.Flags())
	c.Flags().DurationVar(&flags.Timeout, "timeout", 3*time.Minute, "how long to wait for the release to be removed")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole) error {
	paths := flags.Host.Paths()
	host := k3s.DetectHost(paths)
	getter := flags.Kube.Getter(flags.Namespace, paths.Kubeconfig())
	clients, err := kube.NewClients(getter)
	if err != nil {
		return fmt.Errorf("connect to the cluster: %w", err)
	}
	progress := cli.NewProgress(logger)

	if host.Server && !flags.Helm {
		return uninstallK3s(ctx, logger, streams, paths, flags, clients, getter)
	}

	progress.Start("Uninstalling Helm release " + charts.DefaultReleaseName)
	removed, err := helminstall.Uninstall(ctx, helminstall.Options{
		Getter: getter, Client: clients.Kube, ReleaseName: charts.DefaultReleaseName,
		Namespace: flags.Namespace, Timeout: flags.Timeout, Debugf: logger.V(2).Infof,
	})
	progress.End(err == nil)
	if err != nil {
		return err
	}
	deleteExternalCredentials(ctx, logger, streams, clients, flags.Namespace)
	if removed {
		fmt.Fprintf(streams.Out, "Removed Ballast from namespace %s.\n", flags.Namespace)
	} else {
		fmt.Fprintf(streams.Out, "No Ballast release in namespace %s; nothing to remove.\n", flags.Namespace)
	}
	return nil
}

// uninstallK3s removes Ballast from a k3s server: the HelmChart through the
// API, then this server's files. It refuses, changing nothing, when another
// server carries the HelmChart manifest: k3s would apply it again whenever
// that server starts.
func uninstallK3s(ctx context.Context, logger *log.Logger, streams cli.IOStreams, paths k3s.Paths, flags *flagpole, clients *kube.Clients,
	getter genericclioptions.RESTClientGetter) error {
	local, err := flags.Host.Node()
	if err != nil {
		return err
	}
	cl, err := k3s.ReadCluster(ctx, clients.Kube, clients.Dynamic, local)
	if err != nil {
		return fmt.Errorf("%w; nothing changed", err)
	}
	if holder := cl.ManifestElsewhere(); holder != "" {
		return fmt.Errorf("Ballast's HelmChart manifest is on server %s (annotation %s), and k3s applies it again whenever %s starts: "+
			"run `sudo ballast uninstall` on %s first, then here to remove this server's files; nothing changed",
			holder, k3s.ManifestNodeAnnotation, holder, holder)
	}
	mode, err := cl.ChartMode()
	if err != nil {
		return fmt.Errorf("%w; nothing changed", err)
	}
	// The components' leader-election Leases, which helm-controller's
	// uninstall does not know of: named by the release before it goes.
	leases, err := helminstall.ReleaseLeases(helminstall.Options{Getter: getter, ReleaseName: k3s.HelmChartName, Namespace: flags.Namespace})
	if err != nil {
		return fmt.Errorf("%w; nothing changed", err)
	}
	progress := cli.NewProgress(logger)
	progress.Start("Deleting HelmChart " + k3s.HelmChartNamespace + "/" + k3s.HelmChartName + " and waiting for helm-controller")
	res, err := k3s.Installer{Paths: paths}.Uninstall(ctx, func(ctx context.Context) error {
		var bindNear []string
		if mode == k3s.ModeReplaceDefault {
			// Only Ballast serves default-scheduler, which helm-controller's
			// uninstall Job asks for: place its pod here if Ballast does not.
			bindNear = []string{local}
		}
		if err := deleteHelmChart(ctx, logger, clients, flags.Timeout, bindNear); err != nil {
			return err
		}
		return helminstall.DeleteLeases(ctx, clients.Kube, leases)
	})
	progress.End(err == nil)
	if err != nil {
		return err
	}
	deleteExternalCredentials(ctx, logger, streams, clients, flags.Namespace)
	if res.ManifestRemoved {
		fmt.Fprintf(streams.Out, "Removed Ballast and %s.\n", paths.Manifest())
	} else {
		fmt.Fprintln(streams.Out, "Ballast's HelmChart manifest was not on this host; the cluster object is gone.")
	}
	if res.DropInRemoved {
		fmt.Fprintf(streams.Out, "Removed the k3s scheduler drop-in %s.\n", paths.DropIn())
	}
	for _, f := range res.ImagesRemoved {
		fmt.Fprintf(streams.Out, "Removed the images archive %s that ballast install placed "+
			"(k3s does not import it again; the images it imported stay in containerd until the kubelet collects them).\n", f)
	}
	steps := cl.RevertSteps("sudo ballast uninstall")
	if len(steps) > 0 {
		fmt.Fprintln(streams.Out, "No scheduler serves default-scheduler until the servers below restart without the drop-in; now:")
		cli.WriteSteps(streams.Out, steps)
		return nil
	}
	if res.RestartK3s {
		fmt.Fprintf(streams.Out, "The k3s configuration changed: restart k3s on this server: %s.\n", k3s.RestartCommand)
		return nil
	}
	fmt.Fprintln(streams.Out, "k3s needs no restart.")
	return nil
}

// deleteExternalCredentials deletes what `ballast kubeconfig` created, which
// Helm does not know of. A failure is reported, not fatal: Ballast is gone.
func deleteExternalCredentials(ctx context.Context, logger *log.Logger, streams cli.IOStreams, clients *kube.Clients, namespace string) {
	n, err := kubeconfig.Delete(ctx, clients.Kube, namespace)
	if err != nil {
		logger.Warnf("could not delete every credential `ballast kubeconfig` created: %v", err)
	}
	if n > 0 {
		fmt.Fprintf(streams.Out, "Deleted %d ServiceAccounts, bindings and Secrets that `ballast kubeconfig` created.\n", n)
	}
}

// deleteHelmChart deletes the HelmChart and waits until helm-controller has
// uninstalled the release and released its finalizer. With bindNear, it
// places helm-controller's pending job pods itself, on the first of those
// nodes that fits, when no scheduler does.
func deleteHelmChart(ctx context.Context, logger *log.Logger, clients *kube.Clients, timeout time.Duration, bindNear []string) error {
	client := clients.Dynamic
	res := client.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace)
	err := res.Delete(ctx, k3s.HelmChartName, metav1.DeleteOptions{})
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err):
	case err != nil:
		return err
	default:
		err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
			_, err := res.Get(ctx, k3s.HelmChartName, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if bindNear != nil {
				bound, err := k3s.BindHelmJobPods(ctx, clients.Kube, bindNear...)
				for _, b := range bound {
					logger.Infof("placed helm-controller's job pod %s: no scheduler had", b)
				}
				if err != nil {
					logger.Warnf("%v", err)
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("HelmChart still present after %s (is helm-controller running? kubectl -n %s get jobs): %w",
				timeout, k3s.HelmChartNamespace, err)
		}
	}
	err = client.Resource(k3s.AddonResource).Namespace(k3s.HelmChartNamespace).Delete(ctx, k3s.HelmChartName, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err) && !isNotServed(err) {
		return fmt.Errorf("delete k3s Addon %s: %w", k3s.HelmChartName, err)
	}
	return nil
}

// isNotServed reports a resource the API server does not know (no k3s CRDs).
func isNotServed(err error) bool {
	var status apierrors.APIStatus
	return errors.As(err, &status) && status.Status().Code == 404
}
