package app

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// chartPath is the umbrella chart, relative to the repository root.
const chartPath = "charts/ballast"

// component is one Ballast image.
type component struct {
	// valuesKey is the component's key in the chart's values.yaml.
	valuesKey string
	// module is the directory of the component's module, relative to the
	// repository root: the binary is built there alone (GOWORK=off), as
	// someone who requires the module builds it.
	module string
	// pkg is the main package, relative to the module. Its base name is
	// the binary's name.
	pkg string
	// description is the image's description label.
	description string
	// repository is the image name below the registry, from values.yaml.
	repository string
}

func (c component) binary() string { return path.Base(c.pkg) }

// components are Ballast's images, in the order the chart lists them.
var components = []component{
	{valuesKey: "load-watcher", module: "load-watcher", pkg: "./cmd/load-watcher",
		description: "Ballast load-watcher: real node usage from metrics-server or Prometheus, kept as windowed statistics"},
	{valuesKey: "scheduler", module: "scheduler", pkg: "./cmd/ballast-scheduler",
		description: "Ballast scheduler: kube-scheduler with load-aware plugins"},
	{valuesKey: "descheduler", module: "descheduler", pkg: "./cmd/ballast-descheduler",
		description: "Ballast descheduler: moves pods off hot nodes onto cool or new ones"},
}

// chartDefaults is what the chart expects of the images.
type chartDefaults struct {
	// appVersion is the tag the chart pulls when global.image.tag is empty.
	appVersion string
	// registry is global.image.registry.
	registry string
	// source is the chart's home, the images' source label.
	source string
	// components with their repositories filled from values.yaml.
	components []component
}

// readChart reads the chart's defaults under root.
func readChart(root string) (*chartDefaults, error) {
	var meta struct {
		AppVersion string `yaml:"appVersion"`
		Home       string `yaml:"home"`
	}
	if err := readYAML(filepath.Join(root, chartPath, "Chart.yaml"), &meta); err != nil {
		return nil, err
	}
	var values map[string]yaml.Node
	if err := readYAML(filepath.Join(root, chartPath, "values.yaml"), &values); err != nil {
		return nil, err
	}
	// imageOf returns the image settings below a top-level key.
	imageOf := func(key string) (registry, repository string) {
		var v struct {
			Image struct {
				Registry   string `yaml:"registry"`
				Repository string `yaml:"repository"`
			} `yaml:"image"`
		}
		node := values[key]
		_ = node.Decode(&v) // a missing or odd key leaves them empty, reported below
		return v.Image.Registry, v.Image.Repository
	}
	registry, _ := imageOf("global")
	c := &chartDefaults{
		appVersion: strings.TrimPrefix(meta.AppVersion, "v"),
		registry:   strings.TrimSuffix(registry, "/"),
		source:     meta.Home,
	}
	var errs []error
	if c.appVersion == "" {
		errs = append(errs, errors.New("Chart.yaml: appVersion is empty"))
	}
	if c.registry == "" {
		errs = append(errs, errors.New("values.yaml: global.image.registry is empty"))
	}
	for _, comp := range components {
		_, comp.repository = imageOf(comp.valuesKey)
		if comp.repository == "" {
			errs = append(errs, fmt.Errorf("values.yaml: %s.image.repository is empty", comp.valuesKey))
		}
		c.components = append(c.components, comp)
	}
	return c, errors.Join(errs...)
}

func readYAML(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}
