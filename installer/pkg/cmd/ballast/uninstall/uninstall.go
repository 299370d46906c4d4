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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

type flagpole struct {
	Kube kube.Flags
	installation.Release
	Helm    bool
	Host    k3s.HostFlags
	Timeout time.Duration
	DryRun  bool
}

// NewCommand returns the uninstall command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "uninstall",
		Short: "Remove Ballast and undo every host change ballast install made",
		Long: "On a k3s server, uninstall deletes the HelmChart through the API (helm-controller then removes the\n" +
			"release), then the manifest file and any scheduler drop-in, and says whether k3s must restart.\n" +
			"Elsewhere, or with --helm, it uninstalls the Helm release.\n" +
			"It removes only what is Ballast's: the HelmChart and the credentials `ballast kubeconfig` created carry\n" +
			"Ballast's labels, the host files its header or marker line, the images archives the checksum recorded\n" +
			"when they were placed, the Helm release Ballast's chart. Anything else of those names is left, and said.\n" +
			"--dry-run says what would be deleted and what left, and deletes nothing.",
		Example: "  sudo ballast uninstall --dry-run\n" +
			"  sudo ballast uninstall\n" +
			"  ballast uninstall --helm --ballast-namespace ballast-system --release-name ballast",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runE(c.Context(), logger, streams, flags)
		},
	}
	flags.Kube.AddFlags(c.Flags())
	flags.Release.AddFlags(c.Flags(), true)
	c.Flags().BoolVar(&flags.Helm, "helm", false, "uninstall the Helm release even on a k3s server")
	flags.Host.AddFlags(c.Flags())
	c.Flags().DurationVar(&flags.Timeout, "timeout", 3*time.Minute, "how long to wait for the release to be removed")
	c.Flags().BoolVar(&flags.DryRun, installation.DryRunFlag, false, "say what would be deleted, and what left because it is not Ballast's; delete nothing")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole) error {
	paths := flags.Host.Paths()
	host := k3s.DetectHost(paths)
	onK3s := host.Server && !flags.Helm
	if onK3s && flags.ReleaseName != k3s.HelmChartName {
		return fmt.Errorf("--%s=%s: on a k3s server Ballast's release is k3s's HelmChart %s/%s, whose name it takes; "+
			"uninstall a Helm release of another name with --helm", installation.ReleaseNameFlag, flags.ReleaseName,
			k3s.HelmChartNamespace, k3s.HelmChartName)
	}
	getter := flags.Kube.Getter(flags.Namespace, paths.Kubeconfig())
	clients, err := kube.Connect(ctx, getter)
	if err != nil {
		return err
	}
	if flags.DryRun {
		fmt.Fprintln(streams.Out, "Dry run: nothing deleted.")
	}
	if onK3s {
		return uninstallK3s(ctx, logger, streams, paths, flags, clients, getter)
	}
	return uninstallHelm(ctx, logger, streams, flags, clients, getter)
}

// uninstallHelm removes the Helm release, when it is Ballast's, and what
// `ballast kubeconfig` created for it.
func uninstallHelm(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole, clients *kube.Clients,
	getter genericclioptions.RESTClientGetter) error {
	opts := helminstall.Options{
		Getter: getter, Client: clients.Kube, ReleaseName: flags.ReleaseName,
		Namespace: flags.Namespace, Timeout: flags.Timeout, Debugf: logger.V(2).Infof,
	}
	var plan helminstall.UninstallPlan
	var err error
	if flags.DryRun {
		plan, err = helminstall.PlanUninstall(opts)
	} else {
		progress := cli.NewProgress(logger)
		progress.Start("Uninstalling Helm release " + flags.ReleaseName)
		plan, err = helminstall.Uninstall(ctx, opts)
		progress.End(err == nil)
	}
	if err != nil {
		return err
	}
	switch {
	case plan.NotBallast != nil:
		verb := "Left"
		if flags.DryRun {
			verb = "Would leave"
		}
		fmt.Fprintf(streams.Out, "%s %v: it is not Ballast's; pass the --%s of Ballast's.\n", verb, plan.NotBallast, installation.ReleaseNameFlag)
		return nil
	case !plan.Found:
		fmt.Fprintf(streams.Out, "No release %s in namespace %s; no release to remove.\n", flags.ReleaseName, flags.Namespace)
	case flags.DryRun:
		fmt.Fprintf(streams.Out, "Would uninstall release %s (revision %d) from namespace %s, with its objects.\n", flags.ReleaseName, plan.Revision, flags.Namespace)
		for _, l := range plan.Leases {
			fmt.Fprintf(streams.Out, "Would delete the leader-election Lease %s.\n", l)
		}
	}
	deleteExternalCredentials(ctx, logger, streams, clients, flags)
	if plan.Found && !flags.DryRun {
		fmt.Fprintf(streams.Out, "Removed Ballast (release %s) from namespace %s.\n", flags.ReleaseName, flags.Namespace)
	}
	return nil
}

// uninstallK3s removes Ballast from a k3s server: the HelmChart through the
// API, then this server's files, only those that are Ballast's. It
// refuses, changing nothing, when another server carries the HelmChart
// manifest: k3s would apply it again whenever that server starts.
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
	chartRef := k3s.HelmChartNamespace + "/" + k3s.HelmChartName
	chartOurs, chartWhy := cl.Chart != nil, ""
	if cl.Chart != nil {
		chartOurs, chartWhy = k3s.OwnedHelmChart(cl.Chart)
	}
	var mode k3s.Mode
	var leases []types.NamespacedName
	if chartOurs {
		if mode, err = cl.ChartMode(); err != nil {
			return fmt.Errorf("%w; nothing changed", err)
		}
		// The components' leader-election Leases, which helm-controller's
		// uninstall does not know of: named by the release before it goes.
		leases, err = helminstall.ReleaseLeases(helminstall.Options{Getter: getter, ReleaseName: k3s.HelmChartName, Namespace: flags.Namespace})
		if err != nil {
			return fmt.Errorf("%w; nothing changed", err)
		}
	}
	in := k3s.Installer{Paths: paths}
	plan, err := in.PlanUninstall()
	if err != nil {
		return fmt.Errorf("%w; nothing changed", err)
	}
	// k3s's Addon records the manifest file it applied: it goes with a
	// manifest of Ballast's, or when this host has none.
	foreignManifest := false
	for _, f := range plan.Left() {
		foreignManifest = foreignManifest || f.What == k3s.WhatManifest
	}
	if flags.DryRun {
		switch {
		case chartOurs:
			fmt.Fprintf(streams.Out, "Would delete HelmChart %s; k3s's helm-controller would then uninstall release %s from namespace %s.\n",
				chartRef, k3s.HelmChartName, flags.Namespace)
		case cl.Chart != nil:
			fmt.Fprintf(streams.Out, "Would leave HelmChart %s: %s.\n", chartRef, chartWhy)
		default:
			fmt.Fprintf(streams.Out, "No HelmChart %s in the cluster.\n", chartRef)
		}
		if !foreignManifest {
			fmt.Fprintf(streams.Out, "Would delete k3s's Addon %s (its record of the manifest), if present.\n", chartRef)
		}
		for _, l := range leases {
			fmt.Fprintf(streams.Out, "Would delete the leader-election Lease %s.\n", l)
		}
		for _, f := range plan.Removed("") {
			fmt.Fprintf(streams.Out, "Would remove %s.\n", f)
		}
		reportLeft(streams, plan.Left(), true)
		deleteExternalCredentials(ctx, logger, streams, clients, flags)
		if plan.RestartK3s {
			fmt.Fprintf(streams.Out, "k3s would then need a restart: %s.\n", k3s.RestartCommand)
		}
		return nil
	}

	progress := cli.NewProgress(logger)
	if chartOurs {
		progress.Start("Deleting HelmChart " + chartRef + " and waiting for helm-controller")
	} else {
		progress.Start("Removing Ballast's files")
	}
	res, err := in.Uninstall(ctx, func(ctx context.Context) error {
		if chartOurs {
			var bindNear []string
			if mode == k3s.ModeReplaceDefault {
				// Only Ballast serves default-scheduler, which helm-controller's
				// uninstall Job asks for: place its pod here if Ballast does not.
				bindNear = []string{local}
			}
			if err := deleteHelmChart(ctx, logger, clients, flags.Timeout, bindNear); err != nil {
				return err
			}
		}
		if !foreignManifest {
			if err := deleteAddon(ctx, clients); err != nil {
				return err
			}
		}
		return helminstall.DeleteLeases(ctx, clients.Kube, leases)
	})
	progress.End(err == nil)
	if err != nil {
		return err
	}
	deleteExternalCredentials(ctx, logger, streams, clients, flags)
	switch {
	case cl.Chart != nil && !chartOurs:
		fmt.Fprintf(streams.Out, "Left HelmChart %s: %s.\n", chartRef, chartWhy)
	case res.ManifestRemoved:
		fmt.Fprintf(streams.Out, "Removed Ballast and %s.\n", paths.Manifest())
	default:
		fmt.Fprintln(streams.Out, "Ballast's HelmChart manifest was not on this host; the cluster object is gone.")
	}
	if res.DropInRemoved {
		fmt.Fprintf(streams.Out, "Removed the k3s scheduler drop-in %s.\n", paths.DropIn())
	}
	for _, f := range res.ImagesRemoved {
		fmt.Fprintf(streams.Out, "Removed the images archive %s that ballast install placed "+
			"(k3s does not import it again; the images it imported stay in containerd until the kubelet collects them).\n", f)
	}
	reportLeft(streams, res.Left, false)
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

// reportLeft says which files of Ballast's names were (or would be) left,
// and why.
func reportLeft(streams cli.IOStreams, left []k3s.FileAction, dryRun bool) {
	verb := "Left"
	if dryRun {
		verb = "Would leave"
	}
	for _, f := range left {
		fmt.Fprintf(streams.Out, "%s %s (%s): %s.\n", verb, f.Path, f.What, f.Why)
	}
}

// deleteExternalCredentials deletes what `ballast kubeconfig` created for
// the release, which Helm does not know of (with --dry-run: says what it
// would). A failure is reported, not fatal: Ballast is gone.
func deleteExternalCredentials(ctx context.Context, logger *log.Logger, streams cli.IOStreams, clients *kube.Clients, flags *flagpole) {
	r, err := kubeconfig.Delete(ctx, clients.Kube, flags.Namespace, flags.ReleaseName, flags.DryRun)
	if err != nil {
		logger.Warnf("could not delete every credential `ballast kubeconfig` created: %v", err)
	}
	verb := "Deleted"
	if flags.DryRun {
		verb = "Would delete"
	}
	if r.Deleted > 0 {
		fmt.Fprintf(streams.Out, "%s %d ServiceAccounts, bindings and Secrets that `ballast kubeconfig` created.\n", verb, r.Deleted)
	}
	for _, f := range r.Files {
		fmt.Fprintf(streams.Out, "The kubeconfig file %s stays where it was written; its token stops working with its ServiceAccount.\n", f)
	}
	left := "Left"
	if flags.DryRun {
		left = "Would leave"
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(streams.Out, "%s %s.\n", left, s)
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
	return nil
}

// deleteAddon deletes k3s's record of the applied manifest file.
func deleteAddon(ctx context.Context, clients *kube.Clients) error {
	err := clients.Dynamic.Resource(k3s.AddonResource).Namespace(k3s.HelmChartNamespace).Delete(ctx, k3s.HelmChartName, metav1.DeleteOptions{})
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
