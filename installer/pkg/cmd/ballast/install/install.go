// Package install implements `ballast install`: a HelmChart manifest on a k3s
// server, a Helm SDK install everywhere else.
package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/dryrun"
	"github.com/ballast-sched/ballast/installer/pkg/health"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/preflight"
	"github.com/ballast-sched/ballast/installer/pkg/startcheck"
)

type flagpole struct {
	Values values.Options
	Kube   kube.Flags
	installation.Release
	Mode string
	// ModeSet is true when --mode was given; otherwise global.schedulerMode in the values decides.
	ModeSet bool
	Helm    bool
	Host    k3s.HostFlags
	Timeout time.Duration
	// ResetValues starts from the chart's defaults instead of the last install's values.
	ResetValues bool
	// AllowVersionSkew installs on an API server outside the chart's kubeVersion.
	AllowVersionSkew bool
	// Images is an images archive, or a directory of them, to place where
	// k3s imports images; the chart then uses its images.
	Images string
	// Wait, on k3s, waits until helm-controller has deployed the release and
	// the components are Ready.
	Wait bool
	// DryRun validates and says what would be written, writing nothing.
	DryRun bool
}

// NewCommand returns the install command.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	flags := &flagpole{}
	c := &cobra.Command{
		Use:   "install",
		Short: "Install or upgrade Ballast (k3s: as a HelmChart manifest; elsewhere: with Helm)",
		Long: "On a k3s server, install writes a HelmChart carrying the embedded chart into k3s's auto-deploy\n" +
			"directory (works offline; run it as root). Anywhere else, or with --helm, it installs or upgrades the\n" +
			"Helm release through your kubeconfig and waits for the rollout. Running it again is an upgrade: it keeps\n" +
			"the values and mode of the last install, applies the ones given now on top, and prints what changed\n" +
			"(--reset-values starts from the chart's defaults). With the same values it changes nothing.\n" +
			"--dry-run says what would be written, and sends the objects to a reachable API server as a server-side\n" +
			"dry run (validation and admission run, nothing is stored); it writes nothing.",
		Example: "  sudo ballast install\n" +
			"  sudo ballast install --images _output/images    # from a checkout: make images first; no registry needed\n" +
			"  sudo ballast install --mode replaceDefault      # then follow the steps it prints for the other servers\n" +
			"  ballast install --helm --registry registry.lan:5000/ballast  # any cluster, from a checkout: make push REGISTRY=registry.lan:5000/ballast first\n" +
			"  ballast install --helm --kubeconfig ~/.kube/config -f values.yaml --set descheduler.dryRun=true\n" +
			"  ballast install --helm --dry-run -f values.yaml                 # what would change, nothing written",
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			flags.ModeSet = c.Flags().Changed("mode")
			return runE(c.Context(), logger, streams, flags)
		},
	}
	flags.Values.AddFlags(c.Flags())
	flags.Kube.AddFlags(c.Flags())
	flags.Release.AddFlags(c.Flags(), true)
	c.Flags().BoolVar(&flags.DryRun, installation.DryRunFlag, false, "say what would be written, with a server-side dry run of every object on a reachable cluster; write nothing")
	c.Flags().StringVar(&flags.Mode, "mode", string(k3s.ModeSecond), "second (workloads opt in with schedulerName) or replaceDefault (Ballast schedules every pod; see docs/k3s.md)")
	c.Flags().BoolVar(&flags.Helm, "helm", false, "install through the Helm SDK even on a k3s server")
	flags.Host.AddFlags(c.Flags())
	c.Flags().DurationVar(&flags.Timeout, "timeout", 5*time.Minute, "how long install waits for Ballast to be ready (on k3s: for helm-controller to deploy it, then for the components)")
	c.Flags().BoolVar(&flags.Wait, "wait", true, "on k3s, wait until helm-controller has deployed Ballast and its components are Ready (--wait=false returns once the HelmChart is written)")
	c.Flags().StringVar(&flags.Images, "images", "", "on k3s, an images archive (ballast-images-linux-<arch>.tar, from make images or a release) or a directory holding them: "+
		"the one for this node's architecture is placed where k3s imports images, and the chart uses its images (no registry needed)")
	c.Flags().BoolVar(&flags.ResetValues, "reset-values", false, "start from the chart's defaults instead of keeping the values (and mode) of the last install")
	c.Flags().BoolVar(&flags.AllowVersionSkew, "allow-version-skew", false, "install on an API server outside the Kubernetes versions Ballast's scheduler supports: older than it, or more than one minor newer (unsupported)")
	return c
}

func runE(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole) error {
	given, err := flags.Values.Merge()
	if err != nil {
		return err
	}
	if _, err := schedulerMode(flags, given, given); err != nil {
		return err
	}
	paths := flags.Host.Paths()
	host := k3s.DetectHost(paths)
	logger.V(1).Infof("k3s on this host: server=%t agent=%t evidence=%v", host.Server, host.Agent, host.Evidence)
	onK3s := host.Server && !flags.Helm
	if onK3s && flags.ReleaseName != k3s.HelmChartName {
		return fmt.Errorf("--%s=%s: on a k3s server Ballast's release is k3s's HelmChart %s/%s, whose name it takes; "+
			"install a release of another name through Helm with --helm", installation.ReleaseNameFlag, flags.ReleaseName,
			k3s.HelmChartNamespace, k3s.HelmChartName)
	}

	getter := flags.Kube.Getter(flags.Namespace, paths.Kubeconfig())
	clients, clientErr := kube.Connect(ctx, getter)
	if clientErr == nil {
		clientErr = preflightCluster(ctx, logger, clients, given)
	}
	if clientErr == nil {
		if err := checkVersion(clients, flags.AllowVersionSkew, logger); err != nil {
			return fmt.Errorf("%w; nothing written", err)
		}
	}

	if flags.Images != "" && flags.Values.Registry != "" {
		return fmt.Errorf("--images and --%s both say where the images come from: give --images for an archive on this k3s server, "+
			"--%s for a registry the nodes pull from; nothing written", values.RegistryFlag, values.RegistryFlag)
	}
	if flags.Images != "" && (!host.Server || flags.Helm) {
		return fmt.Errorf("--images places the archive where a k3s server imports images, and this is no k3s server (or --helm is set): " +
			"import the archive of each node's architecture with its container runtime (ctr -n k8s.io images import) on every node, " +
			"or push the images to your registry (make push REGISTRY=host[:port]/path) and install with --registry; see docs/install.md#any-cluster-from-a-checkout")
	}
	if onK3s {
		if clientErr != nil {
			what := "writing the HelmChart anyway, k3s applies it when it runs"
			if flags.DryRun {
				what = "the dry run checks the HelmChart on this host only"
			}
			logger.Warnf("%v\n%s (its Kubernetes version could not be checked)", clientErr, what)
		}
		return installK3s(ctx, logger, streams, paths, flags, given, getter, clients, clientErr)
	}
	if host.Agent && !flags.Helm {
		logger.Infof("this host is a k3s agent; installing through the API instead (a server would take a HelmChart)")
	}
	if clientErr != nil {
		return clientErr
	}
	return installHelm(ctx, logger, streams, clients, getter, flags, given)
}

// checkVersion refuses an API server outside the versions Ballast's
// scheduler may talk to (the chart's kubeVersion: its own minor and the next),
// unless the user accepts the skew.
func checkVersion(clients *kube.Clients, allowSkew bool, logger *log.Logger) error {
	chrt, err := charts.Load()
	if err != nil {
		return err
	}
	info, err := clients.Kube.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("read the API server's version: %w", err)
	}
	err = preflight.KubeVersion(info, chrt.Metadata.KubeVersion)
	if err != nil && allowSkew {
		logger.Warnf("--allow-version-skew: installing anyway, unsupported: %v", err)
		return nil
	}
	return err
}

// upgradeValues returns the values to install and the mode: the previous
// install's values with this run's on top (unless --reset-values), so an
// upgrade keeps what the user set before.
func upgradeValues(flags *flagpole, given, previous map[string]any) (map[string]any, k3s.Mode, error) {
	vals := given
	if previous != nil && !flags.ResetValues {
		vals = values.Overlay(previous, given)
	}
	mode, err := schedulerMode(flags, given, vals)
	if err != nil {
		return nil, "", err
	}
	return k3s.WithMode(vals, mode), mode, nil
}

// schedulerMode decides the mode: --mode when given (it must not contradict
// global.schedulerMode given in this run's values), else the values (this
// run's, then the previous install's kept in merged), else second.
func schedulerMode(flags *flagpole, given, merged map[string]any) (k3s.Mode, error) {
	mode := k3s.Mode(flags.Mode)
	if mode != k3s.ModeSecond && mode != k3s.ModeReplaceDefault {
		return "", fmt.Errorf("--mode=%s: want %s or %s", flags.Mode, k3s.ModeSecond, k3s.ModeReplaceDefault)
	}
	fromGiven := k3s.GlobalString(given, "schedulerMode")
	givenOK := fromGiven != ""
	switch {
	case flags.ModeSet && givenOK && k3s.Mode(fromGiven) != mode:
		return "", fmt.Errorf("--mode=%s contradicts global.schedulerMode=%s in the values: give one of them", mode, fromGiven)
	case flags.ModeSet:
		return mode, nil
	}
	if fromMerged := k3s.GlobalString(merged, "schedulerMode"); fromMerged != "" {
		return k3s.Mode(fromMerged), nil
	}
	return k3s.ModeSecond, nil
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

func installK3s(ctx context.Context, logger *log.Logger, streams cli.IOStreams, paths k3s.Paths, flags *flagpole,
	given map[string]any, getter genericclioptions.RESTClientGetter, clients *kube.Clients, clientErr error) error {
	in := k3s.Installer{Paths: paths}
	local, err := flags.Host.Node()
	if err != nil {
		return err
	}
	var cl k3s.Cluster
	if clientErr == nil {
		if cl, err = k3s.ReadCluster(ctx, clients.Kube, clients.Dynamic, local); err != nil {
			return fmt.Errorf("%w; nothing written", err)
		}
	}
	previous, found, err := in.PreviousValues()
	if err != nil {
		return err
	}
	holder := cl.ManifestElsewhere()
	if holder != "" {
		// That server's manifest is the truth; this one only follows it.
		if previous, err = cl.ChartValues(); err != nil {
			return err
		}
		found = true
	}
	vals, mode, err := upgradeValues(flags, given, previous)
	if err != nil {
		return err
	}
	var archive string
	if flags.Images != "" {
		if archive, vals, err = imagesArchive(ctx, flags.Images, clients, clientErr, local, vals); err != nil {
			return fmt.Errorf("%w; nothing written", err)
		}
	}
	if holder != "" {
		if err := followHolder(holder, previous, vals, mode); err != nil {
			return err
		}
	}
	if mode == k3s.ModeReplaceDefault && clientErr == nil {
		if err := cl.CheckServers(); err != nil {
			return fmt.Errorf("%w; nothing written", err)
		}
	}
	gate := false
	if clientErr == nil {
		gate = needsAdmissionPolicyGate(clients, vals, mode)
	}
	progress := cli.NewProgress(logger)
	opts := k3s.InstallOptions{
		Values: vals, Namespace: flags.Namespace, Mode: mode, AllowVersionSkew: flags.AllowVersionSkew,
		AdmissionPolicyGate: gate, ManifestNode: local, ManifestElsewhere: holder, Images: archive, DryRun: flags.DryRun,
		WaitForRelease: func(ctx context.Context, want map[string]any) error {
			progress.End(true)
			progress.Start("Waiting for k3s's helm-controller to deploy Ballast before the k3s scheduler is renamed")
			if clientErr != nil {
				return fmt.Errorf("cannot reach the cluster to see helm-controller deploy it: %w", clientErr)
			}
			err := helminstall.WaitForRelease(ctx, helminstall.Options{
				Getter: getter, Client: clients.Kube, ReleaseName: k3s.HelmChartName, Namespace: flags.Namespace,
				Timeout: flags.Timeout, Progress: func(state string) {
					progress.Update("helm-controller: " + state + "; " + k3s.InstallJobState(ctx, clients.Kube))
				},
			}, want)
			if err == nil {
				progress.Update("helm-controller deployed Ballast")
			}
			return err
		},
	}
	if flags.DryRun {
		progress.Start("Validating values (dry run: nothing is written)")
	} else {
		progress.Start("Validating values and writing the HelmChart")
	}
	res, err := in.Install(ctx, opts)
	progress.End(err == nil)
	if err != nil && !errors.Is(err, k3s.ErrDropInNotWritten) {
		return err
	}
	reportValues(streams, found, previous, res.Values, mode)
	if flags.DryRun {
		return dryRunK3s(ctx, logger, streams, flags, res, holder, getter, clients, clientErr)
	}
	if res.Images != "" {
		reportImages(ctx, streams, res, clients, clientErr, local, flags.Images)
	}
	switch {
	case holder != "" && res.CopyRemoved:
		fmt.Fprintf(streams.Out, "Removed %s: server %s carries Ballast's HelmChart manifest, and only one server may, "+
			"or k3s would apply a leftover copy again when this server starts.\n", res.Manifest, holder)
	case holder != "":
		fmt.Fprintf(streams.Out, "Ballast's HelmChart manifest is on server %s; this server only needs its own k3s files.\n", holder)
	case res.ManifestChanged:
		fmt.Fprintf(streams.Out, "Wrote %s; k3s's helm-controller installs Ballast into namespace %s shortly.\n", res.Manifest, flags.Namespace)
	default:
		fmt.Fprintf(streams.Out, "%s is already up to date; nothing changed.\n", res.Manifest)
	}
	if err != nil {
		fmt.Fprintf(streams.Out, "Replace mode is not complete: %v.\n"+
			"k3s keeps scheduling every pod meanwhile. Once `%s` shows Ballast installed, run this\n"+
			"command again: it then writes the k3s scheduler drop-in.\n", err, statusCommand(flags))
		return err
	}
	if gate {
		fmt.Fprintf(streams.Out, "Namespace opt-in needs the MutatingAdmissionPolicy API, beta on this Kubernetes: %s turns it on.\n", paths.AdmissionPolicyDropIn())
	}
	steps := serverSteps(cl, mode)
	if len(steps) > 0 {
		health.WriteServers(streams.Out, cl, paths.DropInWritten())
		fmt.Fprintln(streams.Out, "To finish, in this order:")
		cli.WriteSteps(streams.Out, steps)
	} else if res.RestartK3s {
		fmt.Fprintf(streams.Out, "The k3s configuration changed: restart k3s on this server: %s.\n", k3s.RestartCommand)
	}
	// Ballast's pods run once k3s restarts; until then there is nothing to
	// wait for here.
	if !flags.Wait || len(steps) > 0 || res.RestartK3s {
		fmt.Fprintf(streams.Out, "Check progress with: %s\n", statusCommand(flags))
		return nil
	}
	if clientErr != nil {
		// Asked to wait, and cannot see anything: a failure, not a success.
		return fmt.Errorf("wrote the HelmChart, which k3s applies when it runs, but cannot wait for Ballast to be ready: %w\n"+
			"once the cluster is reachable, check with: %s (or pass --wait=false not to wait)", clientErr, statusCommand(flags))
	}
	return waitK3s(ctx, logger, streams, clients, getter, flags, res.Values)
}

// waitK3s waits, up to --timeout, until helm-controller has deployed the
// release with vals and every component is Ready, showing what it waits
// for, and says plainly what is missing when the time is up.
func waitK3s(ctx context.Context, logger *log.Logger, streams cli.IOStreams, clients *kube.Clients,
	getter genericclioptions.RESTClientGetter, flags *flagpole, vals map[string]any) error {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, flags.Timeout)
	defer cancel()
	o := helminstall.Options{Getter: getter, Client: clients.Kube, ReleaseName: k3s.HelmChartName, Namespace: flags.Namespace,
		Timeout: flags.Timeout}
	progress := cli.NewProgress(logger)
	progress.Start("Waiting for k3s's helm-controller to deploy Ballast")
	o.Progress = func(state string) {
		progress.Update("helm-controller: " + state + "; " + k3s.InstallJobState(ctx, clients.Kube))
	}
	if err := helminstall.WaitForRelease(ctx, o, vals); err != nil {
		progress.End(false)
		job := k3s.InstallJobState(context.Background(), clients.Kube)
		hint := ""
		if strings.HasPrefix(job, "no Job") {
			hint = "; is k3s running, without --disable-helm-controller, and the manifest not disabled by a .skip file?"
		}
		return fmt.Errorf("%w; %s%s. Inspect with: kubectl -n %s get helmchart,jobs,pods; %s",
			err, job, hint, k3s.HelmChartNamespace, statusCommand(flags))
	}
	progress.Update("helm-controller deployed Ballast")
	progress.End(true)
	progress.Start("Waiting for Ballast's components to be Ready")
	o.Progress, o.Timeout = progress.Update, 0
	if err := helminstall.WaitReady(ctx, o); err != nil {
		progress.End(false)
		return fmt.Errorf("Ballast is deployed, but after %s (--timeout) it is %w; inspect with: kubectl -n %s get pods,events",
			flags.Timeout, err, flags.Namespace)
	}
	progress.Update("Ballast's components are Ready")
	progress.End(true)
	fmt.Fprintf(streams.Out, "Ballast is ready in namespace %s (%s after the HelmChart was written).\n",
		flags.Namespace, time.Since(start).Round(time.Second))
	fmt.Fprintf(streams.Out, "See its health and each node's usage with: %s\n", statusCommand(flags))
	return nil
}

// followHolder refuses an install on a server that does not carry the
// HelmChart manifest when it would change the HelmChart's values or mode:
// they change on the server that carries it, so that one file stays the truth.
func followHolder(holder string, chartValues, vals map[string]any, mode k3s.Mode) error {
	changes := values.Diff(chartValues, vals)
	if len(changes) == 0 {
		return nil
	}
	var b strings.Builder
	values.WriteDiff(&b, changes)
	return fmt.Errorf("Ballast's HelmChart manifest is on server %s (annotation %s on the HelmChart), and values and mode change there only; "+
		"this install would change:\n%srun `sudo ballast install --mode %s` with these values on %s first, then this command again here; nothing written",
		holder, k3s.ManifestNodeAnnotation, b.String(), mode, holder)
}

// serverSteps is what is left on the servers after this one: converting the
// others (replaceDefault), or returning them to their own scheduler.
func serverSteps(cl k3s.Cluster, mode k3s.Mode) []string {
	if mode == k3s.ModeReplaceDefault {
		return cl.ConversionSteps(true)
	}
	return cl.RevertSteps("sudo ballast install --mode second")
}

// needsAdmissionPolicyGate reports whether k3s must turn on the beta
// MutatingAdmissionPolicy API for the chart's namespace opt-in: on a 1.34 or
// 1.35 API server (installed with --allow-version-skew), in second mode,
// with optIn enabled. From 1.36 the API is GA and on by default.
func needsAdmissionPolicyGate(clients *kube.Clients, vals map[string]any, mode k3s.Mode) bool {
	if mode != k3s.ModeSecond {
		return false
	}
	if o, ok := vals["optIn"].(map[string]any); ok && o["enabled"] == false {
		return false
	}
	info, err := clients.Kube.Discovery().ServerVersion()
	if err != nil {
		return false
	}
	major, minor, err := preflight.ServerMinor(info)
	return err == nil && major == 1 && (minor == 34 || minor == 35)
}

// reportValues says what an upgrade changes in the values, and which mode it keeps.
func reportValues(streams cli.IOStreams, found bool, previous, now map[string]any, mode k3s.Mode) {
	if !found {
		return
	}
	changes := values.Diff(previous, now)
	if len(changes) == 0 {
		fmt.Fprintf(streams.Out, "Upgrade keeps the values of the last install (mode %s); --reset-values starts from the chart's defaults.\n", mode)
		return
	}
	fmt.Fprintf(streams.Out, "Upgrade changes these values of the last install (mode %s):\n", mode)
	values.WriteDiff(streams.Out, changes)
}

func installHelm(ctx context.Context, logger *log.Logger, streams cli.IOStreams, clients *kube.Clients, getter genericclioptions.RESTClientGetter, flags *flagpole, given map[string]any) error {
	opts := helminstall.Options{
		Getter:      getter,
		Client:      clients.Kube,
		ReleaseName: flags.ReleaseName,
		Namespace:   flags.Namespace,
		Timeout:     flags.Timeout,
		Debugf:      logger.V(2).Infof,
	}
	previous, found, err := helminstall.PreviousValues(opts)
	if err != nil {
		return err
	}
	vals, mode, err := upgradeValues(flags, given, previous)
	if err != nil {
		return err
	}
	if mode == k3s.ModeReplaceDefault {
		logger.Warnf("replaceDefault outside a k3s server: your cluster's own scheduler must already serve only %q "+
			"(docs/k3s.md explains the profile rename), or Ballast's pods will never be scheduled", k3s.DefaultBootstrapSchedulerName)
	}
	progress := cli.NewProgress(logger)
	progress.Start("Validating values")
	manifest, _, err := startcheck.Render(ctx, charts.RenderOptions{ReleaseName: flags.ReleaseName, Namespace: flags.Namespace, Values: vals})
	if err != nil {
		progress.End(false)
		return fmt.Errorf("invalid values, nothing installed: %w", err)
	}
	progress.End(true)
	reportValues(streams, found, previous, vals, mode)
	if flags.DryRun {
		verb := "install"
		if found {
			verb = "upgrade"
		}
		fmt.Fprintf(streams.Out, "Dry run: nothing written; would %s release %s in namespace %s with the embedded chart.\n", verb, flags.ReleaseName, flags.Namespace)
		objs, err := dryrun.Objects(manifest)
		if err != nil {
			return err
		}
		return serverDryRun(ctx, logger, streams, getter, clients, flags.Namespace, objs)
	}

	// The API server's version was checked above with a clearer message (and
	// reads the numeric version fields, which every distribution fills).
	files, err := charts.Files()
	if err != nil {
		return err
	}
	if opts.Chart, err = charts.LoadFiles(charts.WithoutKubeVersion(files)); err != nil {
		return err
	}
	opts.Values = vals
	opts.Progress = progress.Update
	progress.Start(fmt.Sprintf("Installing Ballast into namespace %s", flags.Namespace))
	rel, upgraded, err := helminstall.InstallOrUpgrade(ctx, opts)
	progress.End(err == nil)
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
