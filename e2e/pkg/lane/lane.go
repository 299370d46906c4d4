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
	// netnsName and nodesCgroup are fixed so a new run finds and removes
	// what a crashed one left.
	netnsName          = "ballast-e2e"
	nodesCgroup        = "/ballast-e2e"
	controlPlaneCgroup = "/ballast-e2e/control-plane"
	lockFile           = "/run/ballast-e2e.lock"
	// NodeName is the lane's first node; the others are NodeName-2, -3….
	NodeName = "ballast-e2e-node"
	// maxNodes bounds Options.Nodes (and what a new run cleans up).
	maxNodes = 4
	// SandboxImage is the pause image containerd starts each pod with.
	SandboxImage = "ballast.local/e2e/pause:e2e"
	// defaultNodeMemory is a node's allocatable size before eviction
	// reserve: a 4 GiB homelab machine.
	defaultNodeMemory = 4 << 30
	// ipForward is the host's IPv4 forwarding switch: the host routes
	// between the nodes of a lane with more than one.
	ipForward = "/proc/sys/net/ipv4/ip_forward"
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
	// NodeMemory is each node's memory as the kubelet offers it to pods; 0
	// means 4 GiB.
	NodeMemory int64
	// Nodes is how many nodes the lane runs, 1 to 4; 0 means 1. Each is a
	// kind-like node of its own (namespaces, cgroup, containerd, kubelet,
	// kube-proxy) with NodeMemory; the host routes between them.
	Nodes int
	// KeepDir keeps the lane's dir (logs, configuration) after Stop.
	KeepDir bool
	// K3s makes the lane a k3s server (ballast-k3s, e2e/pkg/k3sserver):
	// the cluster's kube-scheduler is k3s's, run with the arguments k3s
	// derives from its configuration and drop-ins; helm-controller and k3s's
	// deploy controller run; Images are placed in k3s's agent/images and
	// Addons in its manifests directory, from where the server imports and
	// applies them. One node only.
	K3s bool
	// K3sArgs are the k3s server's command-line flags.
	K3sArgs []string
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
	cp       *controlPlane
	nodes    []*laneNode
	k3s      *k3sServer
	tunables map[string][]byte
	// stops end what the lane serves from this process (ServeRegistry).
	stops []func() error
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
	if opts.Nodes == 0 {
		opts.Nodes = 1
	}
	if opts.Nodes < 1 || opts.Nodes > maxNodes {
		return nil, fmt.Errorf("a lane runs 1 to %d nodes, not %d", maxNodes, opts.Nodes)
	}
	if opts.K3s && opts.Nodes > 1 {
		return nil, fmt.Errorf("a k3s lane runs one node, not %d", opts.Nodes)
	}
	if err := preflight(opts); err != nil {
		return nil, err
	}
	l := &Lane{opts: opts}
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
	// Under the lock, what runs from another lane's dir is not a lane that
	// runs beside this one; and what removeLeftovers killed frees its memory
	// before the host is judged.
	if err := checkHost(opts, os.Stderr); err != nil {
		l.Stop()
		return nil, err
	}
	if l.Dir, err = os.MkdirTemp("", "ballast-e2e-"); err != nil {
		l.Stop()
		return nil, fmt.Errorf("creating the lane's dir: %w", err)
	}
	for i := range opts.Nodes {
		l.nodes = append(l.nodes, newLaneNode(l.Dir, i))
	}
	if err := l.start(ctx); err != nil {
		l.opts.KeepDir = true
		l.Stop()
		return nil, fmt.Errorf("%w (logs in %s)", err, l.Dir)
	}
	return l, nil
}

// removeLeftovers clears the node cgroups and networks of a run that died
// without stopping.
func (l *Lane) removeLeftovers() error {
	if err := nodeinit.RemoveCgroup(nodesCgroup, 30*time.Second); err != nil {
		return fmt.Errorf("removing a previous run's nodes: %w", err)
	}
	if err := allowForwarding(false); err != nil {
		return fmt.Errorf("removing a previous run's forwarding rules: %w", err)
	}
	return tearDownNetworks()
}

// tearDownNetworks removes every node network a lane may have made.
func tearDownNetworks() error {
	var errs []error
	for i := range maxNodes {
		errs = append(errs, newLaneNode("", i).net.tearDown())
	}
	return errors.Join(errs...)
}

func (l *Lane) start(ctx context.Context) error {
	cred, err := issueCredentials(filepath.Join(l.Dir, "pki"), l.nodes)
	if err != nil {
		return err
	}
	l.Kubeconfig = cred.admin
	l.tunables = saveTunables()
	for _, n := range l.nodes {
		if err := n.net.setUp(); err != nil {
			return err
		}
	}
	if len(l.nodes) > 1 {
		if err := os.WriteFile(ipForward, []byte("1\n"), 0o644); err != nil {
			return fmt.Errorf("letting the host route between the nodes: %w", err)
		}
		// A host whose firewall drops what it forwards (Docker sets the
		// FORWARD policy to DROP) must still pass the lane's own traffic.
		if err := allowForwarding(true); err != nil {
			return err
		}
	}
	// A k3s server runs the cluster's scheduler itself.
	l.cp, err = startControlPlane(ctx, l.Dir, l.opts.BinDir, cred, !l.opts.K3s)
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
	for i, n := range l.nodes {
		spec, err := writeNodeFiles(nodeConfig{
			Dir: n.dir, Bin: l.opts.BinDir, Name: n.name, Cgroup: n.cgroup, NetNS: n.net.nsPath(),
			NodeIP: n.net.addrs.nodeIP, PodCIDR: n.net.addrs.podCIDR, PodGateway: n.net.addrs.podGateway,
			ClusterDNS: dnsServiceIP, ClusterCIDR: clusterCIDR,
			SandboxImage: SandboxImage, CACert: cred.ca.CertFile,
			ServingCert: cred.kubelets[i].serving.CertFile, ServingKey: cred.kubelets[i].serving.KeyFile,
			KubeletKubeconfig: cred.kubelets[i].kubeconfig, KubeProxyKubeconfig: cred.kubeProxy,
			SystemReservedMemory: capacity - l.opts.NodeMemory, Socket: n.socket, Eviction: evictionHard,
		})
		if err != nil {
			return err
		}
		// containerd must hold the images before the kubelet asks for a
		// sandbox, but it starts with the node: the kubelet retries until
		// they are there.
		if n.proc, err = startNode(ctx, l.opts.BinDir, n.dir, spec); err != nil {
			return err
		}
		if l.opts.K3s {
			// The k3s server imports them from its agent/images.
			continue
		}
		for _, img := range l.opts.Images {
			if err := n.importImage(ctx, l.opts.BinDir, img); err != nil {
				return err
			}
		}
	}
	if err := l.waitNodesReady(ctx); err != nil {
		return err
	}
	if l.opts.K3s {
		if err := l.startK3s(ctx, cred); err != nil {
			return err
		}
		if len(l.opts.Addons) == 0 {
			return nil
		}
		return l.WaitDeploymentsAvailable(ctx, metav1.NamespaceSystem, 3*time.Minute)
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

// Nodes names the lane's nodes, NodeName first.
func (l *Lane) Nodes() []string {
	names := make([]string, len(l.nodes))
	for i, n := range l.nodes {
		names[i] = n.name
	}
	return names
}

// ImportImage imports a docker-archive or OCI tarball into every node's
// containerd, where the kubelet finds it (namespace k8s.io).
func (l *Lane) ImportImage(ctx context.Context, tarball string) error {
	for _, n := range l.nodes {
		if err := n.importImage(ctx, l.opts.BinDir, tarball); err != nil {
			return err
		}
	}
	return nil
}

func (n *laneNode) importImage(ctx context.Context, bin, tarball string) error {
	if err := n.ctr(ctx, bin, "images", "import", tarball); err != nil {
		return fmt.Errorf("importing %s into %s: %w", tarball, n.name, err)
	}
	return nil
}

// ctr runs containerd's client against the node's containerd, in the
// namespace the kubelet uses.
func (n *laneNode) ctr(ctx context.Context, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "ctr"), append([]string{"--address", n.socket, "--namespace", "k8s.io"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// exited reports whether a node's daemons ended, and how.
func (l *Lane) exited() (bool, error) {
	for _, n := range l.nodes {
		if gone, err := n.proc.exited(); gone {
			return true, err
		}
	}
	if l.k3s != nil {
		if gone, err := l.k3s.proc.exited(); gone {
			return true, err
		}
	}
	return false, nil
}

func (l *Lane) waitNodesReady(ctx context.Context) error {
	return waitFor(ctx, "every node to be Ready", 3*time.Minute, func(ctx context.Context) (bool, error) {
		if gone, err := l.exited(); gone {
			return false, err
		}
		for _, name := range l.Nodes() {
			n, err := l.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				// Not registered yet, or the API server is busy: ask again.
				return false, nil
			}
			ready := false
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady {
					ready = c.Status == corev1.ConditionTrue
				}
			}
			if !ready {
				return false, nil
			}
		}
		return true, nil
	})
}

// RestartAPIServer stops kube-apiserver, keeps it down for down and starts
// it again on the same address and etcd; every client of the lane keeps its
// kubeconfig. It returns when the API server had stopped and when it was
// ready again.
func (l *Lane) RestartAPIServer(ctx context.Context, down time.Duration) (stopped, ready time.Time, err error) {
	return l.cp.restartAPIServer(ctx, down)
}

// KillContainer sends SIGKILL to a container on node, as a crash or the
// kernel's OOM killer ends it; the kubelet then restarts it as the pod's
// restartPolicy says. id is a container ID as a pod's status reports it
// ("containerd://…") or bare.
func (l *Lane) KillContainer(ctx context.Context, node, id string) error {
	id = strings.TrimPrefix(id, "containerd://")
	for _, n := range l.nodes {
		if n.name == node {
			if err := n.ctr(ctx, l.opts.BinDir, "tasks", "kill", "--signal", "SIGKILL", id); err != nil {
				return fmt.Errorf("killing container %s on %s: %w", id, node, err)
			}
			return nil
		}
	}
	return fmt.Errorf("killing container %s: no node %q in the lane", id, node)
}

// WaitDeploymentsAvailable waits until every Deployment in namespace has all
// its replicas updated and available.
func (l *Lane) WaitDeploymentsAvailable(ctx context.Context, namespace string, timeout time.Duration) error {
	var pending []string
	err := waitFor(ctx, "Deployments in "+namespace+" to be available", timeout, func(ctx context.Context) (bool, error) {
		if gone, err := l.exited(); gone {
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

// NodeLog is the path of the first node's daemon's log (containerd,
// kubelet, kube-proxy) or of a control-plane process (kube-apiserver,
// kube-controller-manager, kube-scheduler, k3s).
func (l *Lane) NodeLog(name string) string {
	if name == "kube-apiserver" || name == "kube-controller-manager" || name == "kube-scheduler" || name == "k3s" {
		return filepath.Join(l.Dir, name+".log")
	}
	return filepath.Join(l.nodes[0].dir, name+".log")
}

// Stop tears the lane down: the node (every container with it), the control
// plane, the network, the node's cgroups, and the dir unless kept. The host's
// kernel settings the kubelet changed are put back. It is safe to call on a
// partly started lane and more than once.
func (l *Lane) Stop() {
	var errs []error
	for _, stop := range l.stops {
		errs = append(errs, stop())
	}
	l.stops = nil
	if l.k3s != nil {
		l.k3s.proc.stop(60 * time.Second)
		l.k3s = nil
	}
	for _, n := range l.nodes {
		// A stopped kubelet would not hear the node's SIGTERM.
		errs = append(errs, n.resumeKubelet())
		n.proc.stop(60 * time.Second)
		n.proc = nil
	}
	if l.cp != nil {
		l.cp.stop()
		l.cp = nil
	}
	if err := nodeinit.RemoveCgroup(nodesCgroup, 30*time.Second); err != nil {
		errs = append(errs, err)
	}
	if err := tearDownNetworks(); err != nil {
		errs = append(errs, err)
	}
	if len(l.nodes) > 1 {
		if err := allowForwarding(false); err != nil {
			errs = append(errs, err)
		}
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
