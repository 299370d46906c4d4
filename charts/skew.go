package charts

import (
	"bytes"
	"path"
	"regexp"

	"helm.sh/helm/v3/pkg/chart/loader"
)

// kubeVersionLine matches the kubeVersion constraint of a Chart.yaml.
var kubeVersionLine = regexp.MustCompile(`(?m)^kubeVersion:.*\n`)

// WithoutKubeVersion returns files with the kubeVersion constraint removed
// from every Chart.yaml, for an operator who accepts running Ballast against
// an API server older than the Kubernetes it is built on (Helm and k3s's
// helm-controller refuse the chart there otherwise). files is not modified.
func WithoutKubeVersion(files []*loader.BufferedFile) []*loader.BufferedFile {
	out := make([]*loader.BufferedFile, len(files))
	for i, f := range files {
		out[i] = f
		if path.Base(f.Name) == "Chart.yaml" {
			out[i] = &loader.BufferedFile{Name: f.Name, Data: kubeVersionLine.ReplaceAll(bytes.Clone(f.Data), nil)}
		}
	}
	return out
}
