package k3sserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// Spec wires the lane's k3s server to the lane's own parts, which stand for
// what k3s would make itself: its credentials, its kube-scheduler binary, its
// node's containerd.
type Spec struct {
	// View holds the k3s host's files (HostView.Dir).
	View string
	// AdminKubeconfig is the cluster-admin credential k3s's own controllers
	// and k3s.yaml use.
	AdminKubeconfig string
	// SchedulerKubeconfig, SchedulerCert and SchedulerKey are the credential
	// and serving certificate k3s issues its embedded scheduler; CACert
	// signs the certificate.
	SchedulerKubeconfig, SchedulerCert, SchedulerKey, CACert string
	// KubeletClientCert is the certificate this node's kubelet authenticates
	// with, which names the node.
	KubeletClientCert string
	// KubeScheduler is the kube-scheduler binary; SchedulerLog receives its output.
	KubeScheduler, SchedulerLog string
	// Ctr and ContainerdSocket reach the node's containerd to import images.
	Ctr, ContainerdSocket string
	// ReadyFile is created once the server runs.
	ReadyFile string
}

// flags are the k3s server flags the lane acts on.
type flags struct {
	config                string
	nodeName              string
	helmJobImage          string
	disableHelmController bool
	disableScheduler      bool
	schedulerArgs         []string
	kubeconfigMode        string
	disable               []string
	// notApplied are k3s flags the lane records but cannot apply: its
	// other components keep the lane's own flags.
	notApplied []string
}

func newFlagSet(f *flags) *pflag.FlagSet {
	fs := pflag.NewFlagSet("server", pflag.ContinueOnError)
	fs.StringVarP(&f.config, "config", "c", ConfigFile, "k3s's configuration file; its drop-ins are in <file>.d")
	fs.StringVar(&f.nodeName, "node-name", "", "this server's node name")
	fs.StringVar(&f.helmJobImage, "helm-job-image", "", "image of helm-controller's install and delete Jobs")
	fs.BoolVar(&f.disableHelmController, "disable-helm-controller", false, "run no helm-controller")
	fs.BoolVar(&f.disableScheduler, "disable-scheduler", false, "run no kube-scheduler")
	fs.StringArrayVar(&f.schedulerArgs, "kube-scheduler-arg", nil, "an argument of kube-scheduler, name=value")
	fs.StringVar(&f.kubeconfigMode, "write-kubeconfig-mode", "0600", "mode of "+KubeconfigFile)
	fs.StringSliceVar(&f.disable, "disable", nil, "manifests of the manifests directory to remove, by name")
	for _, name := range []string{"kube-apiserver-arg", "kube-controller-manager-arg", "kubelet-arg", "kube-proxy-arg"} {
		fs.StringArrayVar(&f.notApplied, name, nil, "recorded, not applied: the lane's "+strings.TrimSuffix(name, "-arg")+" keeps its flags")
	}
	return fs
}

// parseServerArgs reads a k3s server's arguments as k3s does: the
// configuration file and its drop-ins first (a flag the lane does not know
// is dropped with a warning, as k3s drops a flag a config file names that
// the command lacks), then the command line. It returns the flags and the
// arguments k3s records on its Node.
func parseServerArgs(ctx context.Context, cli []string) (*flags, []string, error) {
	f := &flags{}
	fs := newFlagSet(f)
	config := ConfigFile
	for i, a := range cli {
		switch {
		case a == "--config" || a == "-c":
			if i+1 < len(cli) {
				config = cli[i+1]
			}
		case strings.HasPrefix(a, "--config="):
			config = strings.TrimPrefix(a, "--config=")
		}
	}
	fromFiles, err := ConfigArgs(config)
	if err != nil {
		return nil, nil, err
	}
	var known []string
	for _, a := range fromFiles {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if fs.Lookup(name) == nil {
			klog.FromContext(ctx).Info("Unknown flag in the configuration, skipping", "flag", name)
			continue
		}
		known = append(known, a)
	}
	all := append(known, cli...)
	if err := fs.Parse(all); err != nil {
		return nil, nil, fmt.Errorf("k3s server: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, nil, fmt.Errorf("k3s server: unexpected arguments %q", fs.Args())
	}
	if len(f.notApplied) > 0 {
		klog.FromContext(ctx).Info("Arguments of components the lane runs with its own flags are not applied", "args", f.notApplied)
	}
	return f, append([]string{"server"}, all...), nil
}

// Run is a k3s server as the lane runs it, in the host view spec names,
// until ctx ends: it lays out the files k3s writes, creates k3s's CRDs,
// imports the node's image archives, records its arguments on its Node,
// runs kube-scheduler with the arguments k3s derives from its configuration
// (unless --disable-scheduler), helm-controller (unless
// --disable-helm-controller) and the deploy controller on the manifests
// directory. args are k3s's: "server" and its flags.
func Run(ctx context.Context, spec Spec, args []string) error {
	if len(args) == 0 || args[0] != "server" {
		return fmt.Errorf("want: server [flags], got %q", args)
	}
	if err := (HostView{Dir: spec.View}).Enter(); err != nil {
		return err
	}
	f, nodeArgs, err := parseServerArgs(ctx, args[1:])
	if err != nil {
		return err
	}
	logger := klog.FromContext(ctx)
	logger.Info("Starting the lane's k3s server", "args", nodeArgs)
	node, err := layOut(spec, f)
	if err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", spec.AdminKubeconfig)
	if err != nil {
		return fmt.Errorf("loading the admin kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the admin client: %w", err)
	}
	if err := CreateCRDs(ctx, cfg); err != nil {
		return err
	}
	importer := &Importer{Dir: ImagesDir, Import: func(ctx context.Context, path string) error {
		out, err := exec.CommandContext(ctx, spec.Ctr, "--address", spec.ContainerdSocket, "--namespace", "k8s.io",
			"images", "import", path).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}}
	if err := importer.Sync(ctx, true); err != nil {
		return err
	}
	if err := MarkServer(ctx, client, node, nodeArgs); err != nil {
		return err
	}
	var sched *scheduler
	if !f.disableScheduler {
		if sched, err = startScheduler(ctx, spec.KubeScheduler, spec.SchedulerLog, spec.CACert, SchedulerArgs(f.schedulerArgs)); err != nil {
			return err
		}
		defer sched.stop()
	}
	if !f.disableHelmController {
		if err := (HelmController{JobImage: f.helmJobImage, APIServerPort: 6443, NodeName: node}).Start(ctx, cfg); err != nil {
			return err
		}
	}
	deployer, err := NewDeployer(ctx, cfg, ManifestsDir, node)
	if err != nil {
		return err
	}
	deployer.Disabled = map[string]bool{}
	for _, d := range f.disable {
		deployer.Disabled[d] = true
	}
	go deployer.Run(ctx)
	go importer.Run(ctx)
	if spec.ReadyFile != "" {
		if err := os.WriteFile(spec.ReadyFile, nil, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", spec.ReadyFile, err)
		}
	}
	logger.Info("The lane's k3s server runs", "node", node)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			logger.Info("Stopping the lane's k3s server")
			return nil
		case <-tick.C:
			if sched != nil {
				if err := sched.exited(); err != nil {
					return err
				}
			}
		}
	}
}

// layOut writes the files k3s writes when it starts, from the lane's
// credentials, and returns this server's node name.
func layOut(spec Spec, f *flags) (string, error) {
	mode, err := parseMode(f.kubeconfigMode)
	if err != nil {
		return "", err
	}
	copies := []struct {
		src, dst string
		perm     os.FileMode
	}{
		{spec.AdminKubeconfig, DataDir + "/server/cred/admin.kubeconfig", 0o600},
		{spec.SchedulerKubeconfig, SchedulerKubeconfig, 0o600},
		{spec.SchedulerCert, SchedulerCert, 0o644},
		{spec.SchedulerKey, SchedulerKey, 0o600},
		{spec.CACert, DataDir + "/server/tls/server-ca.crt", 0o644},
		{spec.KubeletClientCert, DataDir + "/agent/client-kubelet.crt", 0o644},
		{spec.AdminKubeconfig, KubeconfigFile, mode},
	}
	for _, c := range copies {
		if err := copyFile(c.src, c.dst, c.perm); err != nil {
			return "", err
		}
	}
	for _, d := range []string{ManifestsDir, ImagesDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("creating %s: %w", d, err)
		}
	}
	if f.nodeName != "" {
		return f.nodeName, nil
	}
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("naming the node: %w", err)
	}
	return strings.ToLower(host), nil
}

func parseMode(s string) (os.FileMode, error) {
	var m uint32
	if _, err := fmt.Sscanf(s, "%o", &m); err != nil || m > 0o777 {
		return 0, errors.New("--write-kubeconfig-mode: " + s + " is not a file mode")
	}
	return os.FileMode(m), nil
}

// Exec runs argv in the host view spec names, replacing this process: a
// command a user would run on the k3s server (sudo ballast install).
func Exec(spec Spec, argv []string) error {
	if len(argv) == 0 {
		return errors.New("exec: no command")
	}
	if err := (HostView{Dir: spec.View}).Enter(); err != nil {
		return err
	}
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return err
	}
	return syscall.Exec(path, argv, os.Environ())
}
