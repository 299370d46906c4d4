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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/cmd"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/internal/cli"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/kube"
	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
	"github.com/ballast-sched/ballast/installer/pkg/log"
)

var (
	helmCharts = schema.GroupVersionResource{Group: "helm.cattle.io", Version: "v1", Resource: "helmcharts"}
	// k3s records every applied manifest file as an Addon; it goes with the file.
	addons = schema.GroupVersionResource{Group: "k3s.cattle.io", Version: "v1", Resource: "addons"}
)

type flagpole struct {
	Kube      kube.Flags
	Namespace string
	Helm      bool
	Root      string
	DataDir   string
	Timeout   time.Duration
}

// NewCommand returns the uninstall command.
func NewCommand(logger *log.Logger, streams cmd.IOStreams) *cobra.Command {
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
	c.Flags().StringVar(&flags.Root, "root", "/", "root of the host filesystem holding k3s's files")
	c.Flags().StringVar(&flags.DataDir, "k3s-data-dir", k3s.DefaultDataDir, "k3s's --data-dir")
	c.Flags().DurationVar(&flags.Timeout, "timeout", 3*time.Minute, "how long to wait for the release to be removed")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cmd.IOStreams, flags *flagpole) error {
	paths := k3s.HostPaths(flags.Root)
	paths.DataDir = flags.DataDir
	host := k3s.DetectHost(paths)
	getter := flags.Kube.Getter(flags.Namespace, paths.Kubeconfig())
	clients, err := kube.NewClients(getter)
	if err != nil {
		return fmt.Errorf("connect to the cluster: %w", err)
	}
	status := cli.NewStatus(logger)

	if host.Server && !flags.Helm {
		status.Start("Deleting HelmChart " + k3s.HelmChartNamespace + "/" + k3s.HelmChartName + " and waiting for helm-controller")
		res, err := k3s.Installer{Paths: paths}.Uninstall(ctx, func(ctx context.Context) error {
			return deleteHelmChart(ctx, clients.Dynamic, flags.Timeout)
		})
		status.End(err == nil)
		if err != nil {
			return err
		}
		deleteExternalCredentials(ctx, logger, streams, clients, flags.Namespace)
		if res.ManifestRemoved {
			fmt.Fprintf(streams.Out, "Removed Ballast and %s.\n", paths.Manifest())
		} else {
			fmt.Fprintln(streams.Out, "Ballast's HelmChart manifest was not on this host; the cluster object is gone.")
		}
		if res.RestartK3s {
			fmt.Fprintln(streams.Out, "Removed the k3s scheduler drop-in: restart k3s on this server now (sudo systemctl restart k3s);\n"+
				"until then no scheduler serves default-scheduler. Run ballast uninstall on every other server too.")
		} else {
			fmt.Fprintln(streams.Out, "k3s needs no restart.")
		}
		return nil
	}

	status.Start("Uninstalling Helm release " + charts.DefaultReleaseName)
	removed, err := helminstall.Uninstall(ctx, helminstall.Options{
		Getter: getter, Client: clients.Kube, ReleaseName: charts.DefaultReleaseName,
		Namespace: flags.Namespace, Timeout: flags.Timeout, Debugf: logger.V(2).Infof,
	})
	status.End(err == nil)
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

// deleteExternalCredentials deletes what `ballast kubeconfig` created, which
// Helm does not know of. A failure is reported, not fatal: Ballast is gone.
func deleteExternalCredentials(ctx context.Context, logger *log.Logger, streams cmd.IOStreams, clients *kube.Clients, namespace string) {
	n, err := kubeconfig.Delete(ctx, clients.Kube, namespace)
	if err != nil {
		logger.Warnf("could not delete every credential `ballast kubeconfig` created: %v", err)
	}
	if n > 0 {
		fmt.Fprintf(streams.Out, "Deleted %d ServiceAccounts, bindings and Secrets that `ballast kubeconfig` created.\n", n)
	}
}

// deleteHelmChart deletes the HelmChart and waits until helm-controller has
// uninstalled the release and released its finalizer.
func deleteHelmChart(ctx context.Context, client dynamic.Interface, timeout time.Duration) error {
	res := client.Resource(helmCharts).Namespace(k3s.HelmChartNamespace)
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
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("HelmChart still present after %s (is helm-controller running? kubectl -n %s get jobs): %w",
				timeout, k3s.HelmChartNamespace, err)
		}
	}
	err = client.Resource(addons).Namespace(k3s.HelmChartNamespace).Delete(ctx, k3s.HelmChartName, metav1.DeleteOptions{})
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
