// Package k3stest lays out fake k3s hosts for tests of code that reads or
// writes k3s's files (`ballast install --root`), and the images archives
// installs place there.
package k3stest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/ballast-sched/ballast/core/pki"
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

// KubeletCert gives the fake server under root the kubelet client
// certificate k3s issues to a node, which names the node (CN system:node:<node>).
func KubeletCert(t testing.TB, root, node string) {
	t.Helper()
	dir := filepath.Join(root, "var/lib/rancher/k3s/agent")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := pki.SelfSigned(dir, "client-kubelet", pki.Leaf{CommonName: "system:node:" + node,
		Organization: []string{"system:nodes"}, Client: true}); err != nil {
		t.Fatal(err)
	}
}

// NodeArgs is the k3s.io/node-args annotation k3s writes for a server
// started with args (command line, then config files, each "--flag=value"
// split in two).
func NodeArgs(args ...string) string {
	data, err := json.Marshal(append([]string{"server"}, args...))
	if err != nil {
		panic(err)
	}
	return string(data)
}

// ImagesArchive writes, as file in dir, an images archive like `make
// images` writes for arch (docker-archive), with one small image per tag.
func ImagesArchive(t testing.TB, dir, file, arch string, tags ...string) string {
	t.Helper()
	refs := map[name.Reference]v1.Image{}
	for _, s := range tags {
		img, err := random.Image(64, 1)
		if err != nil {
			t.Fatal(err)
		}
		cf, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		cf = cf.DeepCopy()
		cf.OS, cf.Architecture = "linux", arch
		if img, err = mutate.ConfigFile(img, cf); err != nil {
			t.Fatal(err)
		}
		ref, err := name.ParseReference(s)
		if err != nil {
			t.Fatal(err)
		}
		refs[ref] = img
	}
	path := filepath.Join(dir, file)
	if err := tarball.MultiRefWriteToFile(path, refs); err != nil {
		t.Fatal(err)
	}
	return path
}
