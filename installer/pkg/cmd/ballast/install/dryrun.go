package install

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/dryrun"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/startcheck"
)

// dryRunK3s says what an install on a k3s server would write, and has a
// reachable API server judge the HelmChart and the objects helm-controller
// would create from it.
func dryRunK3s(ctx context.Context, logger *log.Logger, streams cli.IOStreams, flags *flagpole, res k3s.InstallResult, holder string,
	getter genericclioptions.RESTClientGetter, clients *kube.Clients, clientErr error) error {
	fmt.Fprintln(streams.Out, "Dry run: nothing written.")
	switch {
	case holder != "":
		fmt.Fprintf(streams.Out, "Ballast's HelmChart manifest is on server %s; this server would write none.\n", holder)
	case res.ManifestChanged:
		fmt.Fprintf(streams.Out, "Would write %s; k3s's helm-controller would then install Ballast into namespace %s.\n", res.Manifest, flags.Namespace)
	default:
		fmt.Fprintf(streams.Out, "%s is already up to date; it would not change.\n", res.Manifest)
	}
	for _, c := range res.Changes {
		if c != "would write "+res.Manifest {
			fmt.Fprintf(streams.Out, "  %s\n", c)
		}
	}
	if res.DropInPending {
		fmt.Fprintf(streams.Out, "Once helm-controller had deployed Ballast, it would write the k3s scheduler drop-in; k3s would then need a restart.\n")
	} else if res.RestartK3s {
		fmt.Fprintf(streams.Out, "The k3s configuration would change: k3s would need a restart (%s).\n", k3s.RestartCommand)
	}
	if clientErr != nil {
		fmt.Fprintln(streams.Out, "The cluster could not be reached: no server-side dry run.")
		return nil
	}
	hc, err := dryrun.Objects(string(res.ManifestContent))
	if err != nil {
		return err
	}
	manifest, _, err := startcheck.Render(ctx, charts.RenderOptions{ReleaseName: k3s.HelmChartName, Namespace: flags.Namespace, Values: res.Values})
	if err != nil {
		return err
	}
	objs, err := dryrun.Objects(manifest)
	if err != nil {
		return err
	}
	return serverDryRun(ctx, logger, streams, getter, clients, flags.Namespace, append(hc, objs...))
}

// serverDryRun has the API server judge objs (dryrun.Cluster.Judge) and
// says what it would create and update, and what it refuses: a refusal
// fails the command.
func serverDryRun(ctx context.Context, logger *log.Logger, streams cli.IOStreams, getter genericclioptions.RESTClientGetter,
	clients *kube.Clients, namespace string, objs []*unstructured.Unstructured) error {
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return fmt.Errorf("server-side dry run: %w", err)
	}
	progress := cli.NewProgress(logger)
	progress.Start(fmt.Sprintf("Sending %d objects to the API server as a server-side dry run", len(objs)))
	verdicts, err := dryrun.Cluster{Mapper: mapper, Client: clients.Kube, Dynamic: clients.Dynamic}.Judge(ctx, namespace, objs)
	progress.End(err == nil)
	if err != nil {
		return fmt.Errorf("server-side dry run: %w", err)
	}
	dryrun.Write(streams.Out, verdicts)
	if err := dryrun.Refused(verdicts); err != nil {
		return fmt.Errorf("%w; nothing written", err)
	}
	return nil
}

// statusCommand is the status command for this installation.
func statusCommand(flags *flagpole) string {
	cmd := "ballast status"
	if flags.Namespace != charts.DefaultNamespace {
		cmd += " --" + installation.BallastNamespaceFlag + " " + flags.Namespace
	}
	if flags.ReleaseName != charts.DefaultReleaseName {
		cmd += " --" + installation.ReleaseNameFlag + " " + flags.ReleaseName
	}
	return cmd
}
