package kube

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/homedir"
)

// Place is one place a kubeconfig was looked for.
type Place struct {
	// What names the place as the user knows it, e.g. "$KUBECONFIG".
	What string
	// Paths are the files looked at.
	Paths []string
	// Found says what was there.
	Found Found
}

// Found is what a Place held.
type Found string

// What a place may hold.
const (
	// Absent: no file.
	Absent Found = "does not exist"
	// Unreadable: a file this user may not read.
	Unreadable Found = "exists, but this user may not read it"
	// NotSet: an environment variable that is not set.
	NotSet Found = "not set"
)

// NoKubeconfigError says where a kubeconfig was looked for, none being
// usable. Without it client-go would dial http://localhost:8080 and fail
// with a chain of connection errors that do not say the kubeconfig is
// missing.
type NoKubeconfigError struct {
	Places []Place
}

func (e *NoKubeconfigError) Error() string {
	var b strings.Builder
	b.WriteString("no kubeconfig found; looked at:")
	unreadable := ""
	for _, p := range e.Places {
		fmt.Fprintf(&b, "\n  %s", p.What)
		if len(p.Paths) > 0 && (len(p.Paths) > 1 || p.Paths[0] != p.What) {
			fmt.Fprintf(&b, " (%s)", strings.Join(p.Paths, string(filepath.ListSeparator)))
		}
		if p.Found == Absent && len(p.Paths) > 1 {
			b.WriteString(": none of these exists")
		} else {
			fmt.Fprintf(&b, ": %s", p.Found)
		}
		if p.Found == Unreadable && len(p.Paths) == 1 {
			unreadable = p.Paths[0]
		}
	}
	if unreadable != "" {
		fmt.Fprintf(&b, "\nk3s writes %s for root only: run ballast with sudo, give yourself a copy\n"+
			"(sudo k3s kubectl config view --raw > ~/.kube/config && chmod 600 ~/.kube/config), or pass --kubeconfig", unreadable)
		return b.String()
	}
	b.WriteString("\npass --kubeconfig, or set KUBECONFIG to your cluster's kubeconfig (on a k3s server, k3s writes " + K3sKubeconfig + ")")
	return b.String()
}

// Locate finds the kubeconfig the flags, KUBECONFIG, ~/.kube/config or, on a
// k3s server, k3sKubeconfig name. It returns the path to load explicitly
// (empty: client-go's own rules find it) or, when none is usable and the
// process does not run in a pod, a *NoKubeconfigError.
func Locate(explicit, k3sKubeconfig string) (string, error) {
	if explicit != "" {
		return explicit, nil
	}
	var places []Place
	if env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar); env != "" {
		// With KUBECONFIG set, client-go reads its files only, skipping
		// those that do not exist.
		paths := filepath.SplitList(env)
		for _, p := range paths {
			if found(p) != Absent {
				return "", nil
			}
		}
		places = append(places, Place{What: "$" + clientcmd.RecommendedConfigPathEnvVar, Paths: paths, Found: Absent})
	} else {
		home := filepath.Join(homedir.HomeDir(), clientcmd.RecommendedHomeDir, clientcmd.RecommendedFileName)
		if f := found(home); f != Absent {
			return "", nil
		}
		places = append(places,
			Place{What: "$" + clientcmd.RecommendedConfigPathEnvVar, Found: NotSet},
			Place{What: "~/.kube/config", Paths: []string{home}, Found: Absent})
		if k3sKubeconfig != "" {
			f := found(k3sKubeconfig)
			if f == "" {
				return k3sKubeconfig, nil
			}
			places = append(places, Place{What: "k3s's kubeconfig", Paths: []string{k3sKubeconfig}, Found: f})
		}
	}
	if _, err := rest.InClusterConfig(); err == nil {
		// In a pod client-go falls back to its service account.
		return "", nil
	}
	return "", &NoKubeconfigError{Places: places}
}

// found says whether path is a file this user can read (""), one it cannot
// (Unreadable), or no file (Absent).
func found(path string) Found {
	f, err := os.Open(path)
	switch {
	case err == nil:
		_ = f.Close()
		return ""
	case errors.Is(err, fs.ErrPermission):
		return Unreadable
	case errors.Is(err, fs.ErrNotExist):
		return Absent
	}
	// Some other failure: let client-go meet it and say what it is.
	return ""
}
