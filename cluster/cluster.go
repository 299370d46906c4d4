package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"
	kubeapiservertesting "k8s.io/kubernetes/cmd/kube-apiserver/app/testing"
	"k8s.io/kubernetes/test/utils/ktesting"
	"k8s.io/utils/clock"
)

// defaultAPIServerFlags adapt kube-apiserver to a cluster without kubelets or
// a node-lifecycle controller:
//   - TaintNodesByCondition would put a not-ready taint on every new Node
//     that only a node-lifecycle controller removes, so nothing would schedule;
//   - ServiceAccount admission rejects pods until a controller creates the
//     namespace's default ServiceAccount, which no controller here does.
//
// RBAC is on so tests can check what a component's ServiceAccount may do.
var defaultAPIServerFlags = []string{
	"--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
	"--authorization-mode=RBAC",
}

// Options configures a cluster.
type Options struct {
	// APIServerFlags are extra kube-apiserver flags, applied after Ballast's
	// defaults.
	APIServerFlags []string
	// ControllerWorkers is the number of workers of each controller; 0 means 5.
	ControllerWorkers int
	// Clock is the time the kubelet stand-in stamps on pods it starts (their
	// start time and conditions), so that they agree with a simulated clock
	// of the usage they are compared with; nil is the real clock. Set, the
	// stand-in ends no pod's run by itself (see EndRuns).
	Clock clock.PassiveClock
}

// Cluster is a running in-process control plane.
type Cluster struct {
	// Client is an admin clientset for the cluster.
	Client kubernetes.Interface
	// RestConfig is the admin client configuration; copy it before changing it.
	RestConfig *rest.Config

	dir        string
	kubeconfig string
	etcd       *embed.Etcd
	apiserver  kubeapiservertesting.TestServer
	kubelet    *kubelet
	// controllerPods is the pods as the controllers see them.
	controllerPods corelisters.PodLister

	// lifetime ends when the cluster stops; everything it runs derives from it.
	lifetime context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	stopOnce sync.Once
}

// Start brings up etcd, kube-apiserver, the controllers and the kubelet
// stand-in. tb is a *testing.T in tests or a Standalone elsewhere; Stop runs
// at tb's cleanup, and may be called earlier.
func Start(tb ktesting.TB, opts Options) (*Cluster, error) {
	if opts.ControllerWorkers <= 0 {
		opts.ControllerWorkers = 5
	}
	dir, err := os.MkdirTemp("", "ballast-cluster-")
	if err != nil {
		return nil, fmt.Errorf("creating the cluster's data dir: %w", err)
	}
	c := &Cluster{dir: dir, kubeconfig: filepath.Join(dir, "kubeconfig")}
	tb.Cleanup(c.Stop)
	if err := c.start(tb, opts); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) start(tb ktesting.TB, opts Options) error {
	etcd, etcdURL, err := StartEtcd(filepath.Join(c.dir, "etcd"))
	if err != nil {
		return err
	}
	c.etcd = etcd

	storage := storagebackend.NewDefaultConfig("/registry", nil)
	storage.Transport.ServerList = []string{etcdURL}
	flags := append(append([]string{}, defaultAPIServerFlags...), opts.APIServerFlags...)
	c.apiserver, err = kubeapiservertesting.StartTestServer(tb,
		&kubeapiservertesting.TestServerInstanceOptions{EnableCertAuth: false}, flags, storage)
	if err != nil {
		return fmt.Errorf("starting kube-apiserver: %w", err)
	}
	c.RestConfig = rest.CopyConfig(c.apiserver.ClientConfig)
	c.Client, err = kubernetes.NewForConfig(c.RestConfig)
	if err != nil {
		return fmt.Errorf("creating the admin client: %w", err)
	}
	if err := writeKubeconfig(c.RestConfig, c.kubeconfig, "ballast"); err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	ctx = klog.NewContext(ctx, klog.Background().WithName("cluster"))
	c.lifetime, c.cancel = ctx, cancel
	if err := c.startControllers(ctx, opts.ControllerWorkers); err != nil {
		return err
	}
	c.kubelet = newKubelet(c.Client, opts.Clock)
	c.run(func() { c.kubelet.run(ctx) })
	return nil
}

// run starts fn in a goroutine that Stop waits for.
func (c *Cluster) run(fn func()) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
}

// KubeconfigPath is a kubeconfig file (mode 0600) for the admin client, for
// tools that take a path. It lives as long as the cluster.
func (c *Cluster) KubeconfigPath() string { return c.kubeconfig }

// Stop shuts every part down and removes the cluster's files. It is safe to
// call more than once.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		if c.cancel != nil {
			c.cancel()
		}
		c.wg.Wait()
		if c.apiserver.TearDownFn != nil {
			c.apiserver.TearDownFn()
		}
		if c.etcd != nil {
			c.etcd.Close()
		}
		if err := os.RemoveAll(c.dir); err != nil {
			klog.Background().Error(err, "Removing the cluster's data dir", "dir", c.dir)
		}
	})
}

// WriteKubeconfig writes a kubeconfig (mode 0600) for the admin client to
// path, with its cluster, user and context all called name. The file is the
// caller's: it stays when the cluster stops.
func (c *Cluster) WriteKubeconfig(path, name string) error {
	return writeKubeconfig(c.RestConfig, path, name)
}

// writeKubeconfig saves cfg's server, CA and token as a kubeconfig file.
func writeKubeconfig(cfg *rest.Config, path, name string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		TLSServerName:            cfg.ServerName,
		InsecureSkipTLSVerify:    cfg.Insecure,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		Token:                 cfg.BearerToken,
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	// WriteToFile keeps the mode of a file it overwrites.
	if err := os.Chmod(path, 0o600); err != nil {
		return fmt.Errorf("restricting kubeconfig %s to its owner: %w", path, err)
	}
	return nil
}

// EndRuns ends, Succeeded, every pod on a node that is up whose run is over
// by the cluster's clock (RunsForAnnotation), and returns how many it
// ended. With Options.Clock set the kubelet stand-in ends none by itself:
// the caller calls EndRuns once it has moved its clock. With the real
// clock the stand-in ends them as it sees them and at every heartbeat.
func (c *Cluster) EndRuns(ctx context.Context) (int, error) {
	return c.kubelet.endRuns(ctx)
}
