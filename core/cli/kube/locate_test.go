package kube

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// noCluster points HOME and KUBECONFIG at an empty directory and leaves the
// pod environment out, so that nothing is found unless a case writes it.
func noCluster(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("HOME", dir)
	t.Setenv("KUBECONFIG", "")
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	return dir
}

func write(t *testing.T, path string, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("apiVersion: v1\nkind: Config\n"), mode); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLocate(t *testing.T) {
	tests := []struct {
		name string
		// setup writes files under dir and returns KUBECONFIG and the k3s
		// kubeconfig's path.
		setup      func(t *testing.T, dir string) (env, k3s string)
		explicit   string
		wantPath   string
		wantPlaces func(dir string) []Place
	}{
		{
			name:     "the flag wins, found or not",
			explicit: "/nowhere/config",
			setup:    func(*testing.T, string) (string, string) { return "", "" },
			wantPath: "/nowhere/config",
		},
		{
			name: "~/.kube/config is left to client-go",
			setup: func(t *testing.T, dir string) (string, string) {
				write(t, filepath.Join(dir, ".kube", "config"), 0o600)
				return "", write(t, filepath.Join(dir, "k3s.yaml"), 0o600)
			},
		},
		{
			name: "k3s's kubeconfig when nothing else",
			setup: func(t *testing.T, dir string) (string, string) {
				return "", write(t, filepath.Join(dir, "k3s.yaml"), 0o600)
			},
			wantPath: "K3S",
		},
		{
			name: "one existing file of KUBECONFIG is enough",
			setup: func(t *testing.T, dir string) (string, string) {
				return filepath.Join(dir, "missing") + string(filepath.ListSeparator) + write(t, filepath.Join(dir, "b"), 0o600), ""
			},
		},
		{
			name: "KUBECONFIG's files all missing",
			setup: func(t *testing.T, dir string) (string, string) {
				// ~/.kube/config is not read when KUBECONFIG is set.
				write(t, filepath.Join(dir, ".kube", "config"), 0o600)
				return filepath.Join(dir, "a") + string(filepath.ListSeparator) + filepath.Join(dir, "b"), ""
			},
			wantPlaces: func(dir string) []Place {
				return []Place{{What: "$KUBECONFIG", Paths: []string{filepath.Join(dir, "a"), filepath.Join(dir, "b")}, Found: Absent}}
			},
		},
		{
			name: "nothing anywhere",
			setup: func(_ *testing.T, dir string) (string, string) {
				return "", filepath.Join(dir, "etc", "rancher", "k3s", "k3s.yaml")
			},
			wantPlaces: func(dir string) []Place {
				return []Place{
					{What: "$KUBECONFIG", Found: NotSet},
					{What: "~/.kube/config", Paths: []string{filepath.Join(dir, ".kube", "config")}, Found: Absent},
					{What: "k3s's kubeconfig", Paths: []string{filepath.Join(dir, "etc", "rancher", "k3s", "k3s.yaml")}, Found: Absent},
				}
			},
		},
		{
			name: "k3s's kubeconfig for root only",
			setup: func(t *testing.T, dir string) (string, string) {
				if os.Geteuid() == 0 {
					t.Skip("root reads files of any mode")
				}
				return "", write(t, filepath.Join(dir, "k3s.yaml"), 0o000)
			},
			wantPlaces: func(dir string) []Place {
				return []Place{
					{What: "$KUBECONFIG", Found: NotSet},
					{What: "~/.kube/config", Paths: []string{filepath.Join(dir, ".kube", "config")}, Found: Absent},
					{What: "k3s's kubeconfig", Paths: []string{filepath.Join(dir, "k3s.yaml")}, Found: Unreadable},
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := noCluster(t)
			env, k3s := tt.setup(t, dir)
			t.Setenv("KUBECONFIG", env)
			path, err := Locate(tt.explicit, k3s)
			want := tt.wantPath
			if want == "K3S" {
				want = k3s
			}
			if path != want {
				t.Errorf("path = %q, want %q", path, want)
			}
			var nk *NoKubeconfigError
			if tt.wantPlaces == nil {
				if err != nil {
					t.Fatalf("err = %v, want none", err)
				}
				return
			}
			if !errors.As(err, &nk) {
				t.Fatalf("err = %v, want a *NoKubeconfigError", err)
			}
			if diff := cmp.Diff(tt.wantPlaces(dir), nk.Places); diff != "" {
				t.Errorf("places (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestNoKubeconfigErrorSaysWhereAndWhatToDo(t *testing.T) {
	places := []Place{
		{What: "$KUBECONFIG", Found: NotSet},
		{What: "~/.kube/config", Paths: []string{"/home/me/.kube/config"}, Found: Absent},
		{What: "k3s's kubeconfig", Paths: []string{K3sKubeconfig}, Found: Absent},
	}
	msg := (&NoKubeconfigError{Places: places}).Error()
	for _, want := range []string{"$KUBECONFIG: not set", "/home/me/.kube/config", K3sKubeconfig + "): does not exist", "--kubeconfig"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}

	places[2].Found = Unreadable
	msg = (&NoKubeconfigError{Places: places}).Error()
	for _, want := range []string{"may not read it", "sudo", "--kubeconfig"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestGetterFailsBeforeDialling(t *testing.T) {
	noCluster(t)
	g := Flags{}.Getter("ballast-system", "")
	_, err := NewClients(g)
	var nk *NoKubeconfigError
	if !errors.As(err, &nk) {
		t.Fatalf("NewClients: err = %v, want a *NoKubeconfigError", err)
	}
	if _, err := g.ToDiscoveryClient(); !errors.As(err, &nk) {
		t.Errorf("ToDiscoveryClient: err = %v, want a *NoKubeconfigError", err)
	}
	if _, err := g.ToRawKubeConfigLoader().ClientConfig(); !errors.As(err, &nk) {
		t.Errorf("ToRawKubeConfigLoader: err = %v, want a *NoKubeconfigError", err)
	}
	if ns, _, err := g.ToRawKubeConfigLoader().Namespace(); err != nil || ns != "ballast-system" {
		t.Errorf("namespace = %q, %v; want ballast-system", ns, err)
	}
}
