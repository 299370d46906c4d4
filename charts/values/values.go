// Package values merges the values a user passes to ballast (-f, --set,
// --set-string, --set-file) the way Helm does.
package values

import (
	"fmt"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/cli"
	helmvalues "helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
)

// Options are the value flags of a command.
type Options struct {
	helmvalues.Options
}

// AddFlags registers -f, --set, --set-string and --set-file.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringSliceVarP(&o.ValueFiles, "values", "f", nil, "values file (repeatable; later files win); see docs/values.md")
	fs.StringArrayVar(&o.Values, "set", nil, "set a value, e.g. --set scheduler.plugins.loadAware.thresholds.cpu=80 (repeatable)")
	fs.StringArrayVar(&o.StringValues, "set-string", nil, "set a value as a string (repeatable)")
	fs.StringArrayVar(&o.FileValues, "set-file", nil, "set a value from a file, key=path (repeatable)")
}

// Merge returns the merged user values; chart defaults are not included.
func (o *Options) Merge() (map[string]any, error) {
	vals, err := o.MergeValues(getter.All(cli.New()))
	if err != nil {
		return nil, fmt.Errorf("read values: %w", err)
	}
	return vals, nil
}
