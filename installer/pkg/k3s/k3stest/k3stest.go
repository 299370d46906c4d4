// Package k3stest lays out fake k3s hosts for tests of code that reads or
// writes k3s's files (`ballast install --root`).
package k3stest

import (
	"os"
	"path/filepath"
	"testing"
)

// ServerRoot returns a temporary directory that looks like the root of a
// k3s server: the k3s binary and the auto-deploy manifests directory.
func ServerRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{"usr/local/bin", "var/lib/rancher/k3s/server/manifests"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "usr/local/bin/k3s"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}
