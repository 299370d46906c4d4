// Package lane runs a small real Kubernetes cluster on this machine for
// Ballast's end-to-end tests: etcd (in process), kube-apiserver and
// kube-controller-manager as processes, and one real node — containerd 2.x
// with Debian's runc and CNI plugins, the kubelet and kube-proxy — inside its
// own network, cgroup and mount namespaces, the way kind runs a node in a
// container. Images come from tarballs imported into containerd; there is no
// registry and nothing is downloaded. Cluster DNS (CoreDNS) and metrics-server
// run as pods, built from their Go modules like everything else.
//
// Start needs root, the binaries of `make e2e-bins` and the image tarballs of
// `make images`. One lane runs at a time on a machine; Start first removes
// what a crashed run left behind.
package lane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/e2e/pkg/nodeinit"
)

const (
	// netnsName, hostLink and nodeCgroup are fixed so a new run finds and
	// removes what a crashed one left.
	netnsName          = "ballast-e2e"
	hostLink           = "ballast-e2e0"
	nodeCgroup         = "/ballast-e2e/node"
	controlPlaneCgroup = "/ballast-e2e/control-plane"
	lockFile           = "/run/ballast-e2e.lock"
	// NodeName is the lane's node.
	NodeName = "ballast-e2e-node"
	// SandboxImage is the pause image containerd starts each pod with.
	SandboxImage = "ballast.local/e2e/pause:e2e"
	// defaultNodeMemory is the node's allocatable size before eviction
	// reserve: a 4 GiB homelab machine.
	defaultNodeMemory = 4 << 30
)

// Options configures a lane.
type Options struct {
	// BinDir holds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
	// kube-proxy, containerd, containerd-shim-runc-v2, ctr and ballast-node.
	BinDir string
	// Images are docker-archive tarballs imported into the node's containerd;
	// they must include SandboxImage.
	Images []string
	// Addons are manifests applied once the node is Ready (cluster DNS,
	// metrics-server); their Deployments must become Available.
	Addons [][]byte
	// NodeMemory is the node's memory as the kubelet offers it to pods; 0
	// means 4 GiB.
	NodeMemory int64
	// KeepDir keeps the lane's dir (logs, configuration) after Stop.
	KeepDir bool
}

// Lane is a running cluster.
type Lane struct {
	// Dir holds every file of the lane: certificates, configuration, logs.
	Dir string
	// Kubeconfig is a cluster-admin kubeconfig (mode 0600).
	Kubeconfig string
	// Config and Client are the cluster-admin's.
	Config *rest.Config
	Client kubernetes.Interface

	opts     Options
	lock     *os.File
	net      network
	cp       *controlPlane
	node     *process
	tunables map[string][]byte
	socket   string
}

// Start brings a lane up and returns when its node is Ready and its addons
// are Available. On error it tears down what it started; the lane's dir is
// kept for its logs and named in the error.
func Start(ctx context.Context, opts Options) (*Lane, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the end-to-end lane needs root: it creates cgroups and a network namespace and runs containerd")
	}
	if opts.NodeMemory == 0 {
		opts.NodeMemory = defaultNodeMemory
	}
	if err := preflight(opts); err != nil {
		return nil, err
	}
	l := &Lane{opts: opts, net: network{netns: netnsName, hostLink: hostLink}}
	lock, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", lockFile, err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("another end-to-end lane runs on this machine (%s is locked): %w", lockFile, err)
	}
	l.lock = lock
	if err := l.removeLeftovers(); err != nil {
		l.Stop()
		return nil, err
	}
	if l.Dir, err = os.MkdirTemp("", "ballast-e2e-"); err != nil {
		l.Stop()
		return nil, fmt.Errorf("creating the lane's dir: %w", err)
	}
	if err := l.start(ctx); err != nil {
		l.opts.KeepDir = true
		l.Stop()
		return nil, fmt.Errorf("%w (logs in %s)", err, l.Dir)
	}
	return l, nil
}

func preflight(opts Options) error {
	var missing []string
	for _, b := range []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy",
		"containerd", "containerd-shim-runc-v2", "ctr", "ballast-node"} {
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			missing = append(missing, filepath.Join(opts.BinDir, b)+" (make e2e-bins)")
		}
	}
	for _, f := range append([]string{"/usr/bin/runc", "/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback"}, opts.Images...) {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	for _, c := range []string{"ip", "iptables", "nsenter", "unshare", "sysctl"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c+" (hack/install-test-deps.sh)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the end-to-end lane is missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

// removeLeftovers clears the node cgroup and network of a run that died
// without stopping.
func (l *Lane) removeLeftovers() error {
	if err := nodeinit.RemoveCgroup(filepath.Dir(nodeCgroup), 30*time.Second); err != nil {
		return fmt.Errorf("removing a previous run's node: %w", err)
	}
	return l.net.tearDown()
}

func (l *Lane) start(ctx context.Context) error {
	cred, err := issueCredentials(filepath.Join(l.Dir, "pki"), NodeName)
	if err != nil {
		return err
	}
	l.Kubeconfig = cred.admin
	if err := l.net.setUp(); err != nil {
		return err
	}
	l.cp, err = startControlPlane(ctx, l.Dir, l.opts.BinDir, cred)
	if err != nil {
		return err
	}
	if l.Config, err = cred.restConfig(); err != nil {
		return err
	}
	if l.Client, err = kubernetes.NewForConfig(l.Config); err != nil {
		return fmt.Errorf("creating the admin client: %w", err)
	}
	capacity, err := memTotal()
	if err != nil {
		return err
	}
	if capacity <= l.opts.NodeMemory {
		return fmt.Errorf("the node's memory %d is not below the machine's %d", l.opts.NodeMemory, capacity)
	}
	nodeDir := filepath.Join(l.Dir, "node")
	l.socket = filepath.Join(nodeDir, "containerd", "containerd.sock")
	spec, err := writeNodeFiles(nodeConfig{
		Dir: nodeDir, Bin: l.opts.BinDir, Name: NodeName,
		NodeIP: nodeIP, PodCIDR: podCIDR, PodGateway: podGateway, ClusterDNS: dnsServiceIP, ClusterCIDR: clusterCIDR,
		SandboxImage: SandboxImage, CACert: cred.ca.CertFile,
		ServingCert: cred.kubeletServing.CertFile, ServingKey: cred.kubeletServing.KeyFile,
		KubeletKubeconfig: cred.kubelet, KubeProxyKubeconfig: cred.kubeProxy,
		SystemReservedMemory: capacity - l.opts.NodeMemory, Socket: l.socket,
	})
	if err != nil {
		return err
	}
	l.tunables = saveTunables()
	// containerd must hold the images before the kubelet asks for a sandbox,
	// but it starts with the node: the kubelet retries until they are there.
	l.node, err = startNode(ctx, l.opts.BinDir, nodeDir, spec)
	if err != nil {
		return err
	}
	for _, img := range l.opts.Images {
		if err := l.ImportImage(ctx, img); err != nil {
			return err
		}
	}
	if err := l.waitNodeReady(ctx); err != nil {
		return err
	}
	if len(l.opts.Addons) == 0 {
		return nil
	}
	for _, m := range l.opts.Addons {
		if err := applyManifests(ctx, l.Config, m); err != nil {
			return err
		}
	}
	return l.WaitDeploymentsAvailable(ctx, metav1.NamespaceSystem, 3*time.Minute)
}

// ImportImage imports a docker-archive or OCI tarball into the node's
// containerd, where the kubelet finds it (namespace k8s.io).
func (l *Lane) ImportImage(ctx context.Context, tarball string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(l.opts.BinDir, "ctr"), "--address", l.socket,
		"--namespace", "k8s.io", "images", "import", tarball)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("importing %s: %w: %s", tarball, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (l *Lane) waitNodeReady(ctx context.Context) error {
	return waitFor(ctx, "node "+NodeName+" to be Ready", 3*time.Minute, func(ctx context.Context) (bool, error) {
		if gone, err := l.node.exited(); gone {
			return false, err
		}
		n, err := l.Client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			// Not registered yet, or the API server is busy: ask again.
			return false, nil
		}
		for _, c := range n.Status.Conditions {
			if c.Type == corev1.NodeReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
}

// WaitDeploymentsAvailable waits until every Deployment in namespace has all
// its replicas updated and available.
func (l *Lane) WaitDeploymentsAvailable(ctx context.Context, namespace string, timeout time.Duration) error {
	var pending []string
	err := waitFor(ctx, "Deployments in "+namespace+" to be available", timeout, func(ctx context.Context) (bool, error) {
		if gone, err := l.node.exited(); gone {
			return false, err
		}
		list, err := l.Client.AppsV1().Deployments(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		pending = pending[:0]
		for _, d := range list.Items {
			want := int32(1)
			if d.Spec.Replicas != nil {
				want = *d.Spec.Replicas
			}
			if d.Status.ObservedGeneration < d.Generation || d.Status.UpdatedReplicas < want || d.Status.AvailableReplicas < want {
				pending = append(pending, d.Name)
			}
		}
		return len(list.Items) > 0 && len(pending) == 0, nil
	})
	if err != nil && len(pending) > 0 {
		return fmt.Errorf("%w: not available: %s", err, strings.Join(pending, ", "))
	}
	return err
}

// NodeLog is the path of a node daemon's log (containerd, kubelet,
// kube-proxy) or of a control-plane process (kube-apiserver,
// kube-controller-manager).
func (l *Lane) NodeLog(name string) string {
	if name == "kube-apiserver" || name == "kube-controller-manager" || name == "kube-scheduler" {
		return filepath.Join(l.Dir, name+".log")
	}
	return filepath.Join(l.Dir, "node", name+".log")
}

// Stop tears the lane down: the node (every container with it), the control
// plane, the network, the node's cgroups, and the dir unless kept. The host's
// kernel settings the kubelet changed are put back. It is safe to call on a
// partly started lane and more than once.
func (l *Lane) Stop() {
	if l.node != nil {
		l.node.stop(60 * time.Second)
		l.node = nil
	}
	if l.cp != nil {
		l.cp.stop()
		l.cp = nil
	}
	var errs []error
	if err := nodeinit.RemoveCgroup(filepath.Dir(nodeCgroup), 30*time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := l.net.tearDown(); err != nil {
		errs = append(errs, err)
	}
	if l.tunables != nil {
		if err := restoreTunables(l.tunables); err != nil {
			errs = append(errs, err)
		}
		l.tunables = nil
	}
	if l.Dir != "" && !l.opts.KeepDir {
		if err := os.RemoveAll(l.Dir); err != nil {
			errs = append(errs, err)
		}
	}
	if l.lock != nil {
		l.lock.Close()
		l.lock = nil
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(os.Stderr, "ballast e2e: stopping the lane:", err)
	}
}
