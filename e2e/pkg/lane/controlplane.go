package lane

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/pki"
)

// credentials are the lane's certificates and kubeconfigs, laid out as
// kubeadm lays out a control plane's.
type credentials struct {
	ca, frontProxyCA    *pki.Authority
	apiServer           pki.Pair
	apiServerKubelet    pki.Pair
	frontProxyClient    pki.Pair
	schedulerServing    pki.Pair             // the serving certificate of a k3s server's scheduler
	kubelets            []kubeletCredentials // one per node
	saKey, saPub        string
	admin               string // kubeconfig of a cluster-admin
	controllerManager   string // kubeconfig
	scheduler           string // kubeconfig
	kubeProxy           string // kubeconfig
	server              string // the API server's URL
	adminCert, adminKey []byte
}

// kubeletCredentials are a node's: the kubelet's serving certificate and its
// client kubeconfig.
type kubeletCredentials struct {
	serving    pki.Pair
	kubeconfig string
}

func issueCredentials(dir string, nodes []*laneNode) (*credentials, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	c := &credentials{server: "https://" + net.JoinHostPort(hostIP, strconv.Itoa(apiServerPort))}
	var err error
	if c.ca, err = pki.NewAuthority(dir, "ca"); err != nil {
		return nil, err
	}
	if c.frontProxyCA, err = pki.NewAuthority(dir, "front-proxy-ca"); err != nil {
		return nil, err
	}
	type leafSpec struct {
		into *pki.Pair
		ca   *pki.Authority
		name string
		leaf pki.Leaf
	}
	leaves := []leafSpec{
		{&c.apiServer, c.ca, "apiserver", pki.Leaf{CommonName: "kube-apiserver", Server: true,
			IPs: []net.IP{net.ParseIP(hostIP), net.ParseIP(kubernetesServiceIP), net.ParseIP("127.0.0.1")},
			DNSNames: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc",
				"kubernetes.default.svc.cluster.local", "localhost"}}},
		{&c.apiServerKubelet, c.ca, "apiserver-kubelet-client", pki.Leaf{CommonName: "kube-apiserver-kubelet-client",
			Organization: []string{"system:masters"}, Client: true}},
		{&c.frontProxyClient, c.frontProxyCA, "front-proxy-client", pki.Leaf{CommonName: "front-proxy-client", Client: true}},
		{&c.schedulerServing, c.ca, "kube-scheduler-serving", pki.Leaf{CommonName: "kube-scheduler", Server: true,
			IPs: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}},
	}
	c.kubelets = make([]kubeletCredentials, len(nodes))
	for i, n := range nodes {
		leaves = append(leaves, leafSpec{&c.kubelets[i].serving, c.ca, n.name + "-kubelet", pki.Leaf{CommonName: n.name, Server: true,
			IPs: []net.IP{net.ParseIP(n.net.addrs.nodeIP)}, DNSNames: []string{n.name}}})
	}
	for _, l := range leaves {
		if *l.into, err = l.ca.Issue(dir, l.name, l.leaf); err != nil {
			return nil, err
		}
	}
	if c.saKey, c.saPub, err = pki.NewServiceAccountKey(dir); err != nil {
		return nil, err
	}
	type clientSpec struct {
		into *string
		name string
		leaf pki.Leaf
	}
	clients := []clientSpec{
		{&c.admin, "admin", pki.Leaf{CommonName: "ballast-e2e-admin", Organization: []string{"system:masters"}, Client: true}},
		{&c.controllerManager, "controller-manager", pki.Leaf{CommonName: "system:kube-controller-manager", Client: true}},
		{&c.scheduler, "scheduler", pki.Leaf{CommonName: "system:kube-scheduler", Client: true}},
		{&c.kubeProxy, "kube-proxy", pki.Leaf{CommonName: "system:kube-proxy", Client: true}},
	}
	for i, n := range nodes {
		clients = append(clients, clientSpec{&c.kubelets[i].kubeconfig, n.name + "-kubelet-client",
			pki.Leaf{CommonName: "system:node:" + n.name, Organization: []string{"system:nodes"}, Client: true}})
	}
	caPEM, err := os.ReadFile(c.ca.CertFile)
	if err != nil {
		return nil, fmt.Errorf("reading the cluster CA: %w", err)
	}
	for _, cl := range clients {
		pair, err := c.ca.Issue(dir, cl.name, cl.leaf)
		if err != nil {
			return nil, err
		}
		*cl.into = filepath.Join(dir, cl.name+".kubeconfig")
		if err := writeKubeconfig(*cl.into, c.server, caPEM, pair); err != nil {
			return nil, err
		}
		if cl.name == "admin" {
			c.adminCert, c.adminKey = pair.CertPEM, pair.KeyPEM
		}
	}
	return c, nil
}

// writeKubeconfig writes a mode-0600 kubeconfig with a client certificate.
func writeKubeconfig(path, server string, caPEM []byte, pair pki.Pair) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["lane"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	kc.AuthInfos["lane"] = &clientcmdapi.AuthInfo{ClientCertificateData: pair.CertPEM, ClientKeyData: pair.KeyPEM}
	kc.Contexts["lane"] = &clientcmdapi.Context{Cluster: "lane", AuthInfo: "lane"}
	kc.CurrentContext = "lane"
	raw, err := clientcmd.Write(*kc)
	if err != nil {
		return fmt.Errorf("encoding kubeconfig %s: %w", path, err)
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig %s: %w", path, err)
	}
	return nil
}

// controlPlane is etcd (in this process), kube-apiserver,
// kube-controller-manager and kube-scheduler (processes built from
// k8s.io/kubernetes): the cluster's own scheduler serves default-scheduler,
// as on any cluster Ballast is installed into. On a k3s lane the k3s server
// runs kube-scheduler instead.
type controlPlane struct {
	admin             *rest.Config
	etcd              *embed.Etcd
	apiServer         *process
	controllerManager *process
	scheduler         *process
}

func startControlPlane(ctx context.Context, dir, bin string, cred *credentials, withScheduler bool) (*controlPlane, error) {
	cp := &controlPlane{}
	etcd, etcdURL, err := cluster.StartEtcd(filepath.Join(dir, "etcd"))
	if err != nil {
		return cp, err
	}
	cp.etcd = etcd
	cp.apiServer, err = startProcess("kube-apiserver", filepath.Join(dir, "kube-apiserver.log"),
		filepath.Join(bin, "kube-apiserver"), nil,
		"--etcd-servers="+etcdURL,
		"--bind-address="+hostIP, "--advertise-address="+hostIP, "--secure-port="+strconv.Itoa(apiServerPort),
		"--tls-cert-file="+cred.apiServer.CertFile, "--tls-private-key-file="+cred.apiServer.KeyFile,
		"--client-ca-file="+cred.ca.CertFile,
		"--service-cluster-ip-range="+serviceCIDR,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+cred.saPub, "--service-account-signing-key-file="+cred.saKey,
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--kubelet-client-certificate="+cred.apiServerKubelet.CertFile,
		"--kubelet-client-key="+cred.apiServerKubelet.KeyFile,
		"--kubelet-preferred-address-types=InternalIP",
		// API aggregation, for metrics.k8s.io: the API server proxies to
		// metrics-server's pod directly, as the host has no Service routing.
		"--proxy-client-cert-file="+cred.frontProxyClient.CertFile,
		"--proxy-client-key-file="+cred.frontProxyClient.KeyFile,
		"--requestheader-client-ca-file="+cred.frontProxyCA.CertFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--enable-aggregator-routing=true",
		"--cert-dir="+filepath.Join(dir, "apiserver-certs"),
		"--profiling=false",
	)
	if err != nil {
		return cp, err
	}
	if cp.admin, err = cred.restConfig(); err != nil {
		return cp, err
	}
	if err := cp.waitAPIServerReady(ctx); err != nil {
		return cp, err
	}
	cp.controllerManager, err = startProcess("kube-controller-manager", filepath.Join(dir, "kube-controller-manager.log"),
		filepath.Join(bin, "kube-controller-manager"), nil,
		"--kubeconfig="+cred.controllerManager,
		"--secure-port=0",
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file="+cred.saKey,
		"--root-ca-file="+cred.ca.CertFile,
		"--cluster-signing-cert-file="+cred.ca.CertFile,
		"--cluster-signing-key-file="+filepath.Join(filepath.Dir(cred.ca.CertFile), "ca.key"),
		"--profiling=false",
	)
	if err != nil || !withScheduler {
		return cp, err
	}
	cp.scheduler, err = startProcess("kube-scheduler", filepath.Join(dir, "kube-scheduler.log"),
		filepath.Join(bin, "kube-scheduler"), nil,
		"--kubeconfig="+cred.scheduler,
		"--secure-port=0",
		"--leader-elect=false",
		"--profiling=false",
	)
	return cp, err
}

func (cp *controlPlane) waitAPIServerReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(cp.admin)
	if err != nil {
		return fmt.Errorf("creating the admin client: %w", err)
	}
	return waitFor(ctx, "kube-apiserver to be ready", 2*time.Minute, func(ctx context.Context) (bool, error) {
		if gone, err := cp.apiServer.exited(); gone {
			return false, err
		}
		res := client.Discovery().RESTClient().Get().AbsPath("/readyz").Do(ctx)
		var code int
		res.StatusCode(&code)
		return code == 200, nil
	})
}

// restartAPIServer stops kube-apiserver as a service manager does (SIGTERM,
// then its shutdown), keeps it down for down, and starts it again with the
// same flags on the same address and storage. It returns when the old
// process had exited and when the new one was ready.
func (cp *controlPlane) restartAPIServer(ctx context.Context, down time.Duration) (stopped, ready time.Time, err error) {
	cp.apiServer.stop(60 * time.Second)
	stopped = time.Now()
	select {
	case <-ctx.Done():
		return stopped, ready, ctx.Err()
	case <-time.After(down):
	}
	if cp.apiServer, err = cp.apiServer.again(); err != nil {
		return stopped, ready, err
	}
	if err := cp.waitAPIServerReady(ctx); err != nil {
		return stopped, ready, err
	}
	return stopped, time.Now(), nil
}

func (cp *controlPlane) stop() {
	cp.scheduler.stop(10 * time.Second)
	cp.controllerManager.stop(10 * time.Second)
	cp.apiServer.stop(15 * time.Second)
	if cp.etcd != nil {
		cp.etcd.Close()
	}
}

// restConfig is the admin's client configuration.
func (c *credentials) restConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.admin)
	if err != nil {
		return nil, fmt.Errorf("loading the admin kubeconfig: %w", err)
	}
	return cfg, nil
}

// waitFor polls cond every half second until it holds, returns an error (which
// ends the wait), or timeout passes; the error names what was awaited.
func waitFor(ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) error {
	if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, cond); err != nil {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return nil
}
