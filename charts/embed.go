package charts

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
)

// ChartName is the name of the umbrella chart and of its directory.
const ChartName = "ballast"

//go:embed all:ballast
var embedded embed.FS

// FS returns the chart's files rooted at the chart directory.
func FS() fs.FS {
	sub, err := fs.Sub(embedded, ChartName)
	if err != nil {
		// fs.Sub fails only on an invalid path, and ChartName is a constant.
		panic(err)
	}
	return sub
}

// Files lists the chart's files in lexical order, paths relative to the chart directory.
func Files() ([]*loader.BufferedFile, error) {
	var files []*loader.BufferedFile
	err := fs.WalkDir(FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(FS(), p)
		if err != nil {
			return fmt.Errorf("read embedded chart file %s: %w", p, err)
		}
		files = append(files, &loader.BufferedFile{Name: path.Clean(p), Data: data})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files, nil
}

// Load returns the embedded chart with its subcharts.
func Load() (*chart.Chart, error) {
	files, err := Files()
	if err != nil {
		return nil, err
	}
	return LoadFiles(files)
}

// LoadFiles loads a chart from files laid out like Files.
func LoadFiles(files []*loader.BufferedFile) (*chart.Chart, error) {
	c, err := loader.LoadFiles(files)
	if err != nil {
		return nil, fmt.Errorf("load embedded chart: %w", err)
	}
	return c, nil
}
