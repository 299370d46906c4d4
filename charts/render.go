package charts

import (
	"context"
	"fmt"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
)

// DefaultReleaseName and DefaultNamespace are what `ballast install` uses, so
// objects are named ballast-load-watcher, ballast-scheduler, ballast-descheduler.
const (
	DefaultReleaseName = "ballast"
	DefaultNamespace   = "ballast-system"
	// DefaultKubeVersion is the Kubernetes version a render assumes when not
	// told: the line Ballast is built and tested against.
	DefaultKubeVersion = "v1.36.0"
)

// DefaultAPIVersions are the kinds a DefaultKubeVersion API server serves
// that templates look up by kind (a client-only render knows group versions
// only): MutatingAdmissionPolicy is GA in Kubernetes 1.36.
var DefaultAPIVersions = []string{
	"admissionregistration.k8s.io/v1/MutatingAdmissionPolicy",
	"admissionregistration.k8s.io/v1/MutatingAdmissionPolicyBinding",
}

// RenderOptions select what `helm template` would be given.
type RenderOptions struct {
	// ReleaseName defaults to DefaultReleaseName.
	ReleaseName string
	// Namespace defaults to DefaultNamespace.
	Namespace string
	// Values are user values, as merged from -f and --set.
	Values map[string]any
	// KubeVersion is the cluster version templates see; empty means DefaultKubeVersion.
	KubeVersion string
	// APIVersions are the resource kinds (group/version/Kind) the cluster
	// serves beyond the group versions Helm assumes, like `helm template
	// --api-versions`; nil means DefaultAPIVersions.
	APIVersions []string
	// Chart to render; nil means a freshly loaded embedded chart. Rendering
	// prunes disabled subcharts from it, so pass a chart only once.
	Chart *chart.Chart
}

// Render returns the manifests and notes of the chart rendered with opts,
// after schema validation, exactly as a client-only `helm template` would.
func Render(ctx context.Context, opts RenderOptions) (manifest, notes string, err error) {
	c := opts.Chart
	if c == nil {
		if c, err = Load(); err != nil {
			return "", "", err
		}
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun = true
	install.ClientOnly = true
	install.Replace = true
	install.IncludeCRDs = true
	install.ReleaseName = orDefault(opts.ReleaseName, DefaultReleaseName)
	install.Namespace = orDefault(opts.Namespace, DefaultNamespace)
	kv, err := chartutil.ParseKubeVersion(orDefault(opts.KubeVersion, DefaultKubeVersion))
	if err != nil {
		return "", "", fmt.Errorf("kube version %q: %w", opts.KubeVersion, err)
	}
	install.KubeVersion = kv
	install.APIVersions = opts.APIVersions
	if install.APIVersions == nil {
		install.APIVersions = DefaultAPIVersions
	}
	vals := opts.Values
	if vals == nil {
		vals = map[string]any{}
	}
	rel, err := install.RunWithContext(ctx, c, vals)
	if err != nil {
		return "", "", fmt.Errorf("render chart %s: %w", c.Name(), err)
	}
	return rel.Manifest, rel.Info.Notes, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Components are the chart's components, each a Deployment named by
// ComponentFullname, in the order they start.
var Components = []string{"load-watcher", "scheduler", "descheduler"}

// ComponentFullname is the name the chart gives a component's objects
// (Deployment, ServiceAccount, ClusterRole): "<release>-<component>", or the
// release name alone when it already contains the component name.
func ComponentFullname(release, component string) string {
	if strings.Contains(release, component) {
		return release
	}
	return release + "-" + component
}

// OptInPolicyName is the name of the MutatingAdmissionPolicy (and of its
// binding) that opts namespaces in, as the chart names it for a release.
func OptInPolicyName(release string) string { return ComponentFullname(release, "opt-in") }
