// Package installation holds the flags of the commands that install, read
// or remove a Ballast: where its release is (--ballast-namespace,
// --release-name), where the cluster is, and how to print what is read.
package installation

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// Names of the flags every command keeps to one meaning.
const (
	// BallastNamespaceFlag is the namespace Ballast runs in, on every
	// command that reads or writes it.
	BallastNamespaceFlag = "ballast-namespace"
	// NamespaceFlag (-n) is the namespace of the object a command names, as
	// in kubectl; on commands that name no such object it is a deprecated
	// alias of BallastNamespaceFlag.
	NamespaceFlag = "namespace"
	// ReleaseNameFlag is the Helm release, wherever one is read or written.
	ReleaseNameFlag = "release-name"
	// DryRunFlag says what a command would write or delete, and does
	// neither.
	DryRunFlag = "dry-run"
)

// namespaceDeprecation is what a user of the old -n of these commands reads.
const namespaceDeprecation = "use --" + BallastNamespaceFlag + " (-n names the namespace of the object a command names, " +
	"as `ballast explain pod -n NAMESPACE NAME` does)"

// Release locates Ballast's release: its namespace and its name.
type Release struct {
	Namespace   string
	ReleaseName string
	// fromAlias and explicit say which of --namespace and
	// --ballast-namespace set Namespace, so that the two never disagree.
	fromAlias, explicit bool
}

// AddFlags registers --ballast-namespace and --release-name on fs; with
// alias, -n/--namespace too, hidden and deprecated, for the scripts that
// gave Ballast's namespace that way.
func (r *Release) AddFlags(fs *pflag.FlagSet, alias bool) {
	r.Namespace = charts.DefaultNamespace
	r.ReleaseName = charts.DefaultReleaseName
	fs.Var(&namespaceValue{r: r}, BallastNamespaceFlag, "namespace Ballast runs in")
	fs.Lookup(BallastNamespaceFlag).DefValue = charts.DefaultNamespace
	fs.StringVar(&r.ReleaseName, ReleaseNameFlag, charts.DefaultReleaseName, "Helm release name of Ballast")
	if alias {
		AddNamespaceAlias(fs, r)
	}
}

// AddNamespaceAlias registers -n/--namespace as a deprecated alias of
// --ballast-namespace, for a command that names no namespaced object.
func AddNamespaceAlias(fs *pflag.FlagSet, r *Release) {
	fs.VarP(&namespaceValue{r: r, alias: true}, NamespaceFlag, "n", "deprecated: --"+BallastNamespaceFlag)
	fs.Lookup(NamespaceFlag).DefValue = charts.DefaultNamespace
	cli.DeprecateFlag(fs, NamespaceFlag, namespaceDeprecation)
}

// namespaceValue sets Release.Namespace from --ballast-namespace or its
// alias, refusing the two with different values.
type namespaceValue struct {
	r     *Release
	alias bool
}

func (v *namespaceValue) String() string { return v.r.Namespace }
func (v *namespaceValue) Type() string   { return "string" }

func (v *namespaceValue) Set(s string) error {
	otherSet := v.r.fromAlias
	if v.alias {
		otherSet = v.r.explicit
	}
	if otherSet && s != v.r.Namespace {
		return fmt.Errorf("--%s and -n/--%s disagree (%s, %s): give --%s only",
			BallastNamespaceFlag, NamespaceFlag, v.r.Namespace, s, BallastNamespaceFlag)
	}
	if v.alias {
		v.r.fromAlias = true
	} else {
		v.r.explicit = true
	}
	v.r.Namespace = s
	return nil
}

// Flags locate an installed Ballast and say how to print what is read.
type Flags struct {
	Kube kube.Flags
	Release
	// LoadWatcherPort overrides the release's global.loadWatcher.port when
	// not zero.
	LoadWatcherPort int
	Host            k3s.HostFlags
	Timeout         time.Duration
	// Output is empty for tables, or json or yaml (cli.Outputs).
	Output string
}

// AddFlags registers the flags on fs; timeout is --timeout's default. With
// alias, -n/--namespace is the deprecated alias of --ballast-namespace.
func (f *Flags) AddFlags(fs *pflag.FlagSet, timeout time.Duration, alias bool) {
	f.Kube.AddFlags(fs)
	f.Release.AddFlags(fs, alias)
	fs.IntVar(&f.LoadWatcherPort, "load-watcher-port", 0, "port of the load-watcher Service (default: global.loadWatcher.port of the release)")
	cli.AddOutputFlag(fs, &f.Output, "what is shown", nil)
	f.Host.AddFlags(fs)
	fs.DurationVar(&f.Timeout, "timeout", timeout, "how long to wait for the API")
}

// Getter is the kubeconfig the flags name (or the one found: $KUBECONFIG,
// ~/.kube/config, k3s's).
func (f *Flags) Getter() *kube.Getter { return f.Kube.Getter(f.Namespace, f.Host.Paths().Kubeconfig()) }

// ObjectNamespaceAnnotation marks -n/--namespace where it names the
// namespace of the object a command names.
const ObjectNamespaceAnnotation = "ballast.object-namespace"

// AddObjectNamespaceFlag registers -n/--namespace as kubectl has it: the
// namespace of the object the command names (what), by default the
// kubeconfig context's namespace, else default.
func AddObjectNamespaceFlag(fs *pflag.FlagSet, p *string, what string) {
	fs.StringVarP(p, NamespaceFlag, "n", "", "namespace of the "+what+" (default: the kubeconfig context's namespace, else default)")
	_ = fs.SetAnnotation(NamespaceFlag, ObjectNamespaceAnnotation, []string{what})
}
