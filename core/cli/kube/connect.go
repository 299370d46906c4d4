package kube

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// ConnectTimeout bounds the first request Connect makes.
const ConnectTimeout = 20 * time.Second

// Connect builds the clients of getter and asks the API server its version,
// so that a command that cannot reach the cluster fails first, saying which
// kubeconfig it used and how to pick another (an *UnreachableError).
func Connect(ctx context.Context, getter genericclioptions.RESTClientGetter) (*Clients, error) {
	clients, err := NewClients(getter)
	if err != nil {
		var none *NoKubeconfigError
		if errors.As(err, &none) || errors.Is(err, fs.ErrPermission) {
			return nil, err // they say what to do already
		}
		e := Unreachable(getter, err)
		if u, ok := e.(*UnreachableError); ok {
			u.Load = true
		}
		return nil, e
	}
	ctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	defer cancel()
	if err := clients.Kube.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Error(); err != nil {
		return nil, Unreachable(getter, err)
	}
	return clients, nil
}

// UnreachableError is a cluster that did not answer, or refused the
// credentials, with what was used to reach it.
type UnreachableError struct {
	// Kubeconfig are the files the configuration came from; Context the
	// context used; Server the API server's URL.
	Kubeconfig, Context, Server string
	// Load is true when the kubeconfig itself could not be loaded.
	Load bool
	Err  error
}

func (e *UnreachableError) Error() string {
	var b strings.Builder
	what, kubeconfig := "cannot reach the cluster", e.Kubeconfig
	switch {
	case e.Load && kubeconfig != "":
		what, kubeconfig = "cannot load the kubeconfig "+kubeconfig, ""
	case e.Load:
		what = "cannot load the kubeconfig"
	case apierrors.IsUnauthorized(e.Err) || apierrors.IsForbidden(e.Err):
		what = "the cluster refused the credentials"
	}
	b.WriteString(what)
	if e.Server != "" {
		fmt.Fprintf(&b, " at %s", e.Server)
	}
	var used []string
	if kubeconfig != "" {
		used = append(used, "kubeconfig "+kubeconfig)
	}
	if e.Context != "" {
		used = append(used, "context "+e.Context)
	}
	if len(used) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(used, ", "))
	}
	fmt.Fprintf(&b, ": %v\n", e.Err)
	if e.Load {
		b.WriteString("pass --kubeconfig PATH (and --context NAME) of your cluster, or set KUBECONFIG")
	} else {
		b.WriteString("check that the cluster is up and this kubeconfig is its own; to use another, pass --kubeconfig PATH and --context NAME, or set KUBECONFIG")
	}
	return b.String()
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// Unreachable describes err, met reaching the cluster through getter, with
// the kubeconfig, context and server getter uses.
func Unreachable(getter genericclioptions.RESTClientGetter, err error) error {
	var unreachable *UnreachableError
	if errors.As(err, &unreachable) {
		return err
	}
	e := &UnreachableError{Err: err}
	if cfg, cerr := getter.ToRESTConfig(); cerr == nil && cfg != nil {
		e.Server = cfg.Host
	}
	loader := getter.ToRawKubeConfigLoader()
	access := loader.ConfigAccess()
	if f := access.GetExplicitFile(); f != "" {
		e.Kubeconfig = f
	} else {
		var files []string
		for _, f := range access.GetLoadingPrecedence() {
			if _, err := os.Stat(f); err == nil {
				files = append(files, f)
			}
		}
		e.Kubeconfig = strings.Join(files, string(os.PathListSeparator))
	}
	if raw, err := loader.RawConfig(); err == nil {
		e.Context = raw.CurrentContext
	}
	if g, ok := getter.(*Getter); ok && g.Context != nil && *g.Context != "" {
		e.Context = *g.Context
	}
	return e
}
