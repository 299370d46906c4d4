// Command e2e-images builds the images the real-node lane runs besides
// Ballast's own — the pod sandbox (pause), metrics-server, CoreDNS, the
// memory hog and a hostile stand-in for load-watcher — from the static binaries of `make e2e-bins`, with the same
// builder as Ballast's images, into one docker-archive tarball that the lane
// imports into its node's containerd.
//
// Usage: e2e-images -bin _output/e2e/bin -out _output/e2e/images.tar
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/ballast-sched/ballast/images/pkg/build"
)

// Registry prefixes every lane image; the manifests under e2e/manifests and
// the lane's containerd configuration name them with the tag Tag.
const (
	Registry = "ballast.local/e2e/"
	Tag      = "e2e"
)

// programs are the binaries to wrap, by image name.
var programs = []string{"pause", "hog", "hostile", "metrics-server", "coredns"}

func main() {
	bin := flag.String("bin", "_output/e2e/bin", "directory holding the static binaries")
	out := flag.String("out", "_output/e2e/images.tar", "docker-archive tarball to write")
	flag.Parse()
	if err := run(*bin, *out); err != nil {
		fmt.Fprintln(os.Stderr, "e2e-images:", err)
		os.Exit(1)
	}
}

func run(bin, out string) error {
	ca, err := build.HostCACertificates()
	if err != nil {
		return err
	}
	platform := v1.Platform{OS: "linux", Architecture: runtime.GOARCH}
	images := map[name.Tag]v1.Image{}
	for _, p := range programs {
		img, err := build.Image(build.Spec{
			Name:           p,
			Labels:         map[string]string{"org.opencontainers.image.description": "Ballast end-to-end lane: " + p},
			Created:        time.Unix(0, 0).UTC(),
			CACertificates: ca,
		}, build.Binary{Platform: platform, Path: filepath.Join(bin, p)})
		if err != nil {
			return fmt.Errorf("building the %s image: %w", p, err)
		}
		tag, err := name.NewTag(Registry + p + ":" + Tag)
		if err != nil {
			return err
		}
		images[tag] = img
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	if err := build.WriteArchive(out, images); err != nil {
		return fmt.Errorf("writing %s: %w", out, err)
	}
	fmt.Printf("wrote %s (%d images)\n", out, len(images))
	return nil
}
