package kube

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeKubeconfig writes a kubeconfig whose context "home" (namespace ns)
// points at server.
func writeKubeconfig(t *testing.T, server, ns string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config")
	data := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + server + "\"}\n" +
		"users:\n- name: u\n  user: {token: abc}\ncontexts:\n- name: home\n  context: {cluster: c, user: u, namespace: \"" + ns + "\"}\n" +
		"current-context: home\n"
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A cluster that does not answer is said with what was used to reach it,
// and how to pick another.
func TestConnectSaysWhichKubeconfigAndWhatToDo(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := "https://" + l.Addr().String()
	l.Close() // nothing listens there now
	path := writeKubeconfig(t, server, "")

	_, err = Connect(context.Background(), Flags{Kubeconfig: path}.Getter("ballast-system", ""))
	var unreachable *UnreachableError
	if !errors.As(err, &unreachable) {
		t.Fatalf("err = %v, want an *UnreachableError", err)
	}
	for _, want := range []string{"cannot reach the cluster", server, "kubeconfig " + path, "context home", "--kubeconfig", "--context", "KUBECONFIG"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}

	missing := filepath.Join(t.TempDir(), "missing")
	_, err = Connect(context.Background(), Flags{Kubeconfig: missing}.Getter("ballast-system", ""))
	if err == nil || !strings.Contains(err.Error(), "cannot load the kubeconfig "+missing) || !strings.Contains(err.Error(), "--kubeconfig") {
		t.Errorf("a missing kubeconfig: %v", err)
	}
}

func TestContextNamespace(t *testing.T) {
	for _, tc := range []struct{ ns, want string }{{"media", "media"}, {"", "default"}} {
		path := writeKubeconfig(t, "https://127.0.0.1:6443", tc.ns)
		if got := (Flags{Kubeconfig: path}).ContextNamespace(""); got != tc.want {
			t.Errorf("context namespace %q: got %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := (Flags{Kubeconfig: filepath.Join(t.TempDir(), "missing")}).ContextNamespace(""); got != "default" {
		t.Errorf("no kubeconfig: got %q, want default", got)
	}
}
