package install

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/installer/pkg/airgap"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// imagesArchive finds the images archive for this server's architecture in
// flag (a file or a directory), reads it and returns it with vals set to use
// its images: global.image.registry and global.image.tag. The values are
// written into the HelmChart, so later upgrades keep them.
func imagesArchive(ctx context.Context, flag string, clients *kube.Clients, clientErr error, local string,
	vals map[string]any) (string, map[string]any, error) {
	arch := runtime.GOARCH
	if clientErr == nil {
		if n, err := clients.Kube.CoreV1().Nodes().Get(ctx, local, metav1.GetOptions{}); err == nil && n.Status.NodeInfo.Architecture != "" {
			arch = n.Status.NodeInfo.Architecture
		}
	}
	path, err := airgap.Find(flag, arch)
	if err != nil {
		return "", nil, err
	}
	a, err := airgap.Read(path)
	if err != nil {
		return "", nil, err
	}
	if a.Arch != arch {
		return "", nil, fmt.Errorf("images archive %s holds %s images, and this server (node %s) is %s: give %s",
			path, a.Arch, local, arch, airgap.ArchiveName(arch))
	}
	repos, err := repositories(vals)
	if err != nil {
		return "", nil, err
	}
	registry, tag, err := a.ChartImages(repos)
	if err != nil {
		return "", nil, err
	}
	return path, values.Overlay(vals, map[string]any{"global": map[string]any{"image": map[string]any{
		"registry": registry, "tag": tag,
	}}}), nil
}

// repositories names each component's image as the chart will pull it:
// <component>.image.repository of vals, else of the chart. An image pinned
// by digest cannot come from an archive, which holds tags.
func repositories(vals map[string]any) (map[string]string, error) {
	chrt, err := charts.Load()
	if err != nil {
		return nil, err
	}
	image := func(v map[string]any, comp, key string) string {
		s, _ := values.Lookup(v, comp, "image", key).(string)
		return s
	}
	repos := map[string]string{}
	for _, comp := range charts.Components {
		if d := image(vals, comp, "digest"); d != "" {
			return nil, fmt.Errorf("%s.image.digest is set (%s), and an images archive holds tags, not the registry's digests: unset it to use --images", comp, d)
		}
		repo := image(vals, comp, "repository")
		if repo == "" {
			repo = image(chrt.Values, comp, "repository")
		}
		repos[comp] = repo
	}
	return repos, nil
}

// reportImages says where the archive went, and what every other node
// needs: k3s imports only the archives on its own machine.
func reportImages(ctx context.Context, streams cli.IOStreams, res k3s.InstallResult, clients *kube.Clients, clientErr error, local, flag string) {
	verb := "Placed"
	if !res.ImagesChanged {
		verb = "Kept"
	}
	fmt.Fprintf(streams.Out, "%s %s: k3s imports it into this node's containerd while it runs (k3s v1.29.13, v1.30.9, v1.31.5, "+
		"v1.32.0 and later; older releases at their next start, or now with `k3s ctr -n k8s.io images import %s`).\n",
		verb, res.Images, res.Images)
	if clientErr != nil {
		fmt.Fprintf(streams.Out, "Every other node of the cluster needs the archive of its architecture in %s too.\n", filepath.Dir(res.Images))
		return
	}
	nodes, err := clients.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	byArch := map[string][]string{}
	for _, n := range nodes.Items {
		if n.Name != local {
			byArch[n.Status.NodeInfo.Architecture] = append(byArch[n.Status.NodeInfo.Architecture], n.Name)
		}
	}
	if len(byArch) == 0 {
		return
	}
	archs := make([]string, 0, len(byArch))
	for a := range byArch {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	fmt.Fprintf(streams.Out, "Ballast's pods may run on any node: copy the archive of each node's architecture into %s on it "+
		"(sudo install -D -m 0644 <archive> %s/), as k3s imports only the archives on its own machine:\n",
		filepath.Dir(res.Images), filepath.Dir(res.Images))
	for _, a := range archs {
		name := airgap.ArchiveName(a)
		where := "build it with `make images PLATFORMS=linux/" + airgap.Platform(a) + "`, or take it from a release"
		if info, err := os.Stat(flag); err == nil && info.IsDir() {
			if _, err := os.Stat(filepath.Join(flag, name)); err == nil {
				where = filepath.Join(flag, name)
			}
		}
		fmt.Fprintf(streams.Out, "  %s: %s (%s)\n", strings.Join(byArch[a], ", "), name, where)
	}
}
