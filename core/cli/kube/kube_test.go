package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
)

// unreadable is a getter whose kubeconfig cannot be read, as k3s's
// /etc/rancher/k3s/k3s.yaml is for anyone but root (root itself cannot be
// refused by file modes, so the error is made here).
type unreadable struct {
	genericclioptions.RESTClientGetter
	err error
}

func (u unreadable) ToRESTConfig() (*rest.Config, error) { return nil, u.err }

func TestNewClientsExplainsAnUnreadableKubeconfig(t *testing.T) {
	denied := fmt.Errorf("load kubeconfig: %w", &fs.PathError{Op: "open", Path: "/etc/rancher/k3s/k3s.yaml", Err: fs.ErrPermission})
	_, err := NewClients(unreadable{err: denied})
	if err == nil || !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("err = %v, want the permission error kept", err)
	}
	for _, want := range []string{"/etc/rancher/k3s/k3s.yaml", "sudo", "--kubeconfig"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}

	other := errors.New("invalid configuration: no server found")
	if _, err := NewClients(unreadable{err: other}); err != other {
		t.Errorf("other errors must pass unchanged: %v", err)
	}
}
