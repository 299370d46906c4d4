// Command klipper-helm is the program of the image the k3s lane gives
// helm-controller for its install and delete Jobs (k3s's --helm-job-image),
// in place of rancher/klipper-helm, which cannot be pulled here: it reads the
// Job helm-controller made and installs, upgrades or uninstalls the release
// with the Helm SDK (e2e/pkg/helmjob).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/e2e/pkg/helmjob"
)

func main() {
	// An interrupted Helm operation leaves the release pending; like
	// klipper-helm, let it finish and let the kubelet kill the pod if it must.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
	logger := klog.Background().WithName("helm-job")
	ctx := klog.NewContext(context.Background(), logger)
	paths := helmjob.DefaultPaths
	outcome, err := run(ctx, paths, os.Args[1:])
	if err != nil {
		outcome = err.Error()
	}
	// The kubelet puts the termination log in the pod's status.
	if werr := os.WriteFile(paths.TerminationLog, []byte(outcome+"\n"), 0o644); werr != nil {
		logger.V(1).Info("No termination log", "err", werr)
	}
	klog.Flush()
	if err != nil {
		logger.Error(err, "Helm job failed")
		klog.Flush()
		code := 1
		var exit *helmjob.ExitError
		if errors.As(err, &exit) {
			code = exit.Code
		}
		os.Exit(code)
	}
	logger.Info(outcome)
	klog.Flush()
}

func run(ctx context.Context, paths helmjob.Paths, args []string) (string, error) {
	env, err := helmjob.ReadEnv(os.LookupEnv)
	if err != nil {
		return "", err
	}
	act, err := helmjob.ParseArgs(args)
	if err != nil {
		return "", err
	}
	job := helmjob.Job{Env: env, Action: act, Paths: paths, Settings: cli.New()}
	// In the pod there is no kubeconfig: the Helm SDK reaches the API server
	// with the ServiceAccount's in-cluster credentials.
	ns := env.TargetNamespace
	if act.Namespace != "" {
		ns = act.Namespace
	}
	getter := genericclioptions.NewConfigFlags(true)
	getter.Namespace = &ns
	cfg := &action.Configuration{}
	logf := func(format string, v ...any) { klog.FromContext(ctx).V(1).Info(fmt.Sprintf(format, v...)) }
	if err := cfg.Init(getter, ns, env.Driver, logf); err != nil {
		return "", fmt.Errorf("connect to the API server: %w", err)
	}
	return job.Run(ctx, cfg)
}
