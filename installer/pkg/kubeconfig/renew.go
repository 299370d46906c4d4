package kubeconfig

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/ballast-sched/ballast/installer/pkg/atomicfile"
)

// RenewOptions select the kubeconfigs to renew.
type RenewOptions struct {
	Client      kubernetes.Interface
	Namespace   string
	ReleaseName string
	// Component limits the renewal to one component; empty renews all.
	Component string
	// Host is this host's name: the files recorded here are rewritten, the
	// others are left to their own hosts.
	Host string
	// Duration is the new tokens' lifetime; zero asks for what each was
	// asked for before (DefaultDuration when unknown).
	Duration time.Duration
}

// Renewed is one kubeconfig Renew rewrote, or left (Skipped says why).
type Renewed struct {
	Credential
	Skipped string
}

// Renew gives every kubeconfig `ballast kubeconfig` generated for the
// release (and component) a new token, keeping its server and CA: in its
// Secret, or in its file when the file is on this host and is still the
// kubeconfig written there. The old tokens stay valid until they end.
func Renew(ctx context.Context, o RenewOptions) ([]Renewed, error) {
	creds, err := List(ctx, o.Client, o.Namespace, o.ReleaseName)
	if err != nil {
		return nil, err
	}
	var out []Renewed
	for _, c := range creds {
		if o.Component != "" && c.Component != o.Component {
			continue
		}
		r, err := renew(ctx, o, c)
		if err != nil {
			return out, fmt.Errorf("renew the kubeconfig of %s in %s: %w", c.Component, c.Where(), err)
		}
		out = append(out, r)
	}
	return out, nil
}

func renew(ctx context.Context, o RenewOptions, c Credential) (Renewed, error) {
	var data []byte
	if c.Secret != "" {
		s, err := o.Client.CoreV1().Secrets(o.Namespace).Get(ctx, secretName(c.Secret), metav1.GetOptions{})
		if err != nil {
			return Renewed{}, err
		}
		data = s.Data[SecretKey]
	} else {
		if c.Host != "" && o.Host != "" && c.Host != o.Host {
			return Renewed{Credential: c, Skipped: "written on " + c.Host + ": run the command there"}, nil
		}
		var err error
		if data, err = os.ReadFile(c.File); os.IsNotExist(err) {
			return Renewed{Credential: c, Skipped: "not on this host: run the command where it is"}, nil
		} else if err != nil {
			return Renewed{}, err
		}
	}
	info := inspect(data)
	if info.user != c.ServiceAccount && c.ServiceAccount != "" {
		return Renewed{Credential: c, Skipped: fmt.Sprintf("it no longer holds a kubeconfig of ServiceAccount %s", c.ServiceAccount)}, nil
	}
	if info.server == "" {
		return Renewed{Credential: c, Skipped: "it holds no kubeconfig the command wrote; run `ballast kubeconfig " + c.Component + "` again"}, nil
	}
	d := o.Duration
	if d == 0 {
		d = c.Duration
	}
	if d == 0 {
		d = DefaultDuration
	}
	g, err := Generate(ctx, Options{
		Client: o.Client, Namespace: o.Namespace, ReleaseName: o.ReleaseName, Component: c.Component,
		Server: info.server, CAData: info.ca, TLSServerName: info.tlsServerName, Duration: d,
	})
	if err != nil {
		return Renewed{}, err
	}
	if c.Secret != "" {
		err = StoreSecret(ctx, o.Client, o.Namespace, secretName(c.Secret), o.ReleaseName, c.Component, g)
	} else if _, err = atomicfile.Write(c.File, g.Kubeconfig, 0o600); err == nil {
		err = RecordFile(ctx, o.Client, o.Namespace, g, c.File, o.Host)
	}
	if err != nil {
		return Renewed{}, err
	}
	c.Expires, c.Duration = g.Expires, g.Duration
	return Renewed{Credential: c}, nil
}

// secretName is the name of a Credential's namespace/name.
func secretName(ref string) string {
	_, name, _ := strings.Cut(ref, "/")
	return name
}
