// Package values merges the values a user passes to ballast (-f, --set,
// --set-string, --set-file) the way Helm does.
package values

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/cli"
	helmvalues "helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// Options are the value flags of a command.
type Options struct {
	helmvalues.Options
	// Registry, when set, is global.image.registry: the registry and path
	// prefix the images were pushed to (make push REGISTRY=...).
	Registry string
}

// RegistryFlag names the registry of Ballast's images on the commands that
// take values.
const RegistryFlag = "registry"

// AddFlags registers -f, --set, --set-string, --set-file and --registry.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&o.ValueFiles, "values", "f", nil, "values file (repeatable; later files win); see docs/values.md")
	fs.StringArrayVar(&o.Values, "set", nil, "set a value, e.g. --set scheduler.plugins.loadAware.thresholds.cpu=80 (repeatable)")
	fs.StringArrayVar(&o.StringValues, "set-string", nil, "set a value as a string (repeatable)")
	fs.StringArrayVar(&o.FileValues, "set-file", nil, "set a value from a file, key=path (repeatable)")
	fs.StringVar(&o.Registry, RegistryFlag, "", "registry and path prefix of Ballast's images, e.g. registry.lan:5000/ballast, "+
		"where `make push REGISTRY=...` put them (sets global.image.registry; see docs/install.md)")
}

// Merge returns the merged user values; chart defaults are not included.
func (o *Options) Merge() (map[string]any, error) {
	vals, err := o.MergeValues(getter.All(cli.New()))
	if err != nil {
		return nil, fmt.Errorf("read values: %w", err)
	}
	if o.Registry == "" {
		return vals, nil
	}
	registry, err := checkRegistry(o.Registry)
	if err != nil {
		return nil, fmt.Errorf("--%s=%s: %w", RegistryFlag, o.Registry, err)
	}
	global, _ := vals["global"].(map[string]any)
	if global == nil {
		global = map[string]any{}
		vals["global"] = global
	}
	image, _ := global["image"].(map[string]any)
	if image == nil {
		image = map[string]any{}
		global["image"] = image
	}
	if given, ok := image["registry"].(string); ok && strings.TrimSuffix(given, "/") != registry {
		return nil, fmt.Errorf("--%s=%s and global.image.registry=%s in the values disagree: give one of them", RegistryFlag, o.Registry, given)
	}
	image["registry"] = registry
	return vals, nil
}

// checkRegistry returns registry without a trailing slash, or why it is not
// a registry and path prefix an image name can start with. The values'
// validation judges the whole image reference later; this catches the
// mistakes a flag invites.
func checkRegistry(registry string) (string, error) {
	registry = strings.TrimSuffix(registry, "/")
	switch {
	case strings.Contains(registry, "://"):
		return "", fmt.Errorf("give host[:port][/path] without a scheme (a plain-HTTP registry is trusted by the nodes' container runtime, not by the image name; see docs/install.md)")
	case registry == "" || strings.ContainsAny(registry, " \t\n@"):
		return "", fmt.Errorf("want host[:port][/path], e.g. registry.lan:5000/ballast")
	case strings.Contains(registry, ":") && !strings.Contains(strings.SplitN(registry, "/", 2)[0], ":"):
		return "", fmt.Errorf("a tag belongs to global.image.tag, not to the registry")
	}
	return registry, nil
}
