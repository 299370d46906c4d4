package cluster

import (
	"strconv"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery"
)

// Version is the Kubernetes release the in-process control plane is built
// from, k8s.io/kubernetes in go.mod (a test holds them equal).
const Version = "v1.36.3"

// WithVersion returns getter with a discovery client that reports Version
// as the server's: the in-process API server is built without Kubernetes's
// version stamps and reports v0.0.0-master, which a chart's kubeVersion
// (Ballast's included) refuses. For the Helm SDK in tests.
func WithVersion(getter genericclioptions.RESTClientGetter) genericclioptions.RESTClientGetter {
	return versionedGetter{getter}
}

type versionedGetter struct {
	genericclioptions.RESTClientGetter
}

func (g versionedGetter) ToDiscoveryClient() (discovery.CachedDiscoveryInterface, error) {
	d, err := g.RESTClientGetter.ToDiscoveryClient()
	if err != nil {
		return nil, err
	}
	return versionedDiscovery{d}, nil
}

type versionedDiscovery struct {
	discovery.CachedDiscoveryInterface
}

func (versionedDiscovery) ServerVersion() (*version.Info, error) {
	v, err := utilversion.ParseSemantic(Version)
	if err != nil {
		return nil, err
	}
	return &version.Info{Major: strconv.Itoa(int(v.Major())), Minor: strconv.Itoa(int(v.Minor())), GitVersion: Version}, nil
}
