// Package installation holds the flags of the commands that read an
// installed Ballast (status, explain): where the cluster and the release
// are, and how to print what is read.
package installation

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// Flags locate an installed Ballast.
type Flags struct {
	Kube        kube.Flags
	Namespace   string
	ReleaseName string
	// LoadWatcherPort overrides the release's global.loadWatcher.port when
	// not zero.
	LoadWatcherPort int
	Host            k3s.HostFlags
	Timeout         time.Duration
	// Output is empty for tables, or json or yaml (cli.Outputs).
	Output string
}

// AddFlags registers the flags on fs; timeout is --timeout's default.
func (f *Flags) AddFlags(fs *pflag.FlagSet, timeout time.Duration) {
	f.Kube.AddFlags(fs)
	fs.StringVarP(&f.Namespace, "namespace", "n", charts.DefaultNamespace, "namespace Ballast runs in")
	fs.StringVar(&f.ReleaseName, "release-name", charts.DefaultReleaseName, "Helm release name")
	fs.IntVar(&f.LoadWatcherPort, "load-watcher-port", 0, "port of the load-watcher Service (default: global.loadWatcher.port of the release)")
	fs.StringVarP(&f.Output, "output", "o", "", "output format: json or yaml (one document on stdout); empty prints tables")
	f.Host.AddFlags(fs)
	fs.DurationVar(&f.Timeout, "timeout", timeout, "how long to wait for the API")
}

// Getter is the kubeconfig the flags name (or the one found: $KUBECONFIG,
// ~/.kube/config, k3s's).
func (f *Flags) Getter() *kube.Getter { return f.Kube.Getter(f.Namespace, f.Host.Paths().Kubeconfig()) }
