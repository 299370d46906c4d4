// Command e2e-images builds the images the real-node lane runs besides
// Ballast's own — the pod sandbox (pause), metrics-server, CoreDNS, the
// memory hog, a hostile stand-in for load-watcher and the program of
// helm-controller's Jobs (klipper-helm, for the k3s lane) — from the static binaries of `make e2e-bins`, with the same
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

	"github.com/ballast-sched/ballast/e2e/pkg/helmjob"
	"github.com/ballast-sched/ballast/images/pkg/build"
)

// Registry prefixes every lane image; the manifests under e2e/manifests and
// the lane's containerd configuration name them with the tag Tag.
const (
	Registry = "ballast.local/e2e/"
	Tag      = "e2e"
)

// programs are the binaries to wrap, by image name, with their environment.
var programs = []struct {
	name string
	env  []string
}{
	{name: "pause"}, {name: "hog"}, {name: "hostile"}, {name: "metrics-server"}, {name: "coredns"},
	{name: "klipper-helm", env: helmjob.DefaultPaths.Env()},
}

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
			Name:           p.name,
			Env:            p.env,
			Labels:         map[string]string{"org.opencontainers.image.description": "Ballast end-to-end lane: " + p.name},
			Created:        time.Unix(0, 0).UTC(),
			CACertificates: ca,
		}, build.Binary{Platform: platform, Path: filepath.Join(bin, p.name)})
		if err != nil {
			return fmt.Errorf("building the %s image: %w", p.name, err)
		}
		tag, err := name.NewTag(Registry + p.name + ":" + Tag)
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
