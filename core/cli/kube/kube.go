// Package kube builds API clients from --kubeconfig, --context and KUBECONFIG,
// falling back to k3s's kubeconfig on a k3s server.
package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
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
// k3sKubeconfig is used only when no other kubeconfig is configured.
func (f Flags) Getter(namespace, k3sKubeconfig string) *genericclioptions.ConfigFlags {
	cf := genericclioptions.NewConfigFlags(true)
	path := f.Kubeconfig
	if path == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" && k3sKubeconfig != "" {
		if _, err := os.Stat(clientcmd.RecommendedHomeFile); os.IsNotExist(err) {
			if _, err := os.Stat(k3sKubeconfig); err == nil {
				path = k3sKubeconfig
			}
		}
	}
	if path != "" {
		cf.KubeConfig = &path
	}
	if f.Context != "" {
		cf.Context = &f.Context
	}
	ns := namespace
	cf.Namespace = &ns
	return cf
}

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
