// Package kube builds API clients from --kubeconfig, --context and KUBECONFIG,
// falling back to k3s's kubeconfig on a k3s server.
package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// K3sKubeconfig is the admin kubeconfig a k3s server writes for local tools,
// readable by root only; commands fall back to it on a k3s server when no
// other kubeconfig is configured.
const K3sKubeconfig = "/etc/rancher/k3s/k3s.yaml"

// Flags select the cluster.
type Flags struct {
	Kubeconfig string
	Context    string
}

// AddFlags registers --kubeconfig and --context.
func (f *Flags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, ~/.kube/config, then k3s's /etc/rancher/k3s/k3s.yaml)")
	fs.StringVar(&f.Context, "context", "", "kubeconfig context to use")
}

// Getter returns a RESTClientGetter (what the Helm SDK wants) for namespace.
// k3sKubeconfig is used only when no other kubeconfig is configured. When no
// kubeconfig is found (see Locate) the getter's clients fail with a
// *NoKubeconfigError instead of dialling http://localhost:8080.
func (f Flags) Getter(namespace, k3sKubeconfig string) *Getter {
	cf := genericclioptions.NewConfigFlags(true)
	path, err := Locate(f.Kubeconfig, k3sKubeconfig)
	if path != "" {
		cf.KubeConfig = &path
	}
	if f.Context != "" {
		cf.Context = &f.Context
	}
	ns := namespace
	cf.Namespace = &ns
	return &Getter{ConfigFlags: cf, err: err}
}

// ContextNamespace is the namespace of the kubeconfig's context, what
// kubectl uses when -n is not given; "default" when it names none or no
// kubeconfig is found.
func (f Flags) ContextNamespace(k3sKubeconfig string) string {
	path, err := Locate(f.Kubeconfig, k3sKubeconfig)
	if err != nil {
		return metav1.NamespaceDefault
	}
	cf := genericclioptions.NewConfigFlags(false)
	if path != "" {
		cf.KubeConfig = &path
	}
	if f.Context != "" {
		cf.Context = &f.Context
	}
	ns, _, err := cf.ToRawKubeConfigLoader().Namespace()
	if err != nil || ns == "" {
		return metav1.NamespaceDefault
	}
	return ns
}

// Getter is the ConfigFlags of a command, failing with why when no
// kubeconfig was found.
type Getter struct {
	*genericclioptions.ConfigFlags
	err error
}

var _ genericclioptions.RESTClientGetter = &Getter{}

// ToRESTConfig implements genericclioptions.RESTClientGetter.
func (g *Getter) ToRESTConfig() (*rest.Config, error) {
	if g.err != nil {
		return nil, g.err
	}
	return g.ConfigFlags.ToRESTConfig()
}

// ToDiscoveryClient implements genericclioptions.RESTClientGetter.
func (g *Getter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	if g.err != nil {
		return nil, g.err
	}
	return g.ConfigFlags.ToDiscoveryClient()
}

// ToRESTMapper implements genericclioptions.RESTClientGetter.
func (g *Getter) ToRESTMapper() (meta.RESTMapper, error) {
	if g.err != nil {
		return nil, g.err
	}
	return g.ConfigFlags.ToRESTMapper()
}

// ToRawKubeConfigLoader implements genericclioptions.RESTClientGetter.
func (g *Getter) ToRawKubeConfigLoader() clientcmd.ClientConfig {
	l := g.ConfigFlags.ToRawKubeConfigLoader()
	if g.err != nil {
		return failingLoader{loader: l, err: g.err}
	}
	return l
}

// failingLoader keeps the namespace of a loader whose configuration fails.
type failingLoader struct {
	loader clientcmd.ClientConfig
	err    error
}

func (l failingLoader) RawConfig() (clientcmdapi.Config, error) { return clientcmdapi.Config{}, l.err }
func (l failingLoader) ClientConfig() (*rest.Config, error)     { return nil, l.err }
func (l failingLoader) Namespace() (string, bool, error)        { return l.loader.Namespace() }
func (l failingLoader) ConfigAccess() clientcmd.ConfigAccess    { return l.loader.ConfigAccess() }

// Clients are the API clients commands use.
type Clients struct {
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
}

// NewClients connects through getter.
func NewClients(getter genericclioptions.RESTClientGetter) (*Clients, error) {
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, explain(err)
	}
	kc, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Kube: kc, Dynamic: dc}, nil
}

// explain adds what to do to an error loading a kubeconfig: on a k3s server
// the one k3s writes is readable by root only, and a user running ballast
// without sudo meets "permission denied" first.
func explain(err error) error {
	var pathErr *fs.PathError
	if !errors.As(err, &pathErr) || !errors.Is(err, fs.ErrPermission) {
		return err
	}
	return fmt.Errorf("cannot read the kubeconfig %s as user %d: %w.\n"+
		"k3s writes its kubeconfig for root only: run ballast with sudo, give yourself a copy\n"+
		"(sudo k3s kubectl config view --raw > ~/.kube/config && chmod 600 ~/.kube/config), or pass --kubeconfig",
		pathErr.Path, os.Geteuid(), err)
}
