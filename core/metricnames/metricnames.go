// Package metricnames keeps the lists of the Prometheus metrics each
// component exports, docs/metrics/<component>.txt. Each component's tests
// write its list from the metrics its code registers (go test -update), and
// compare it otherwise; the chart's tests check every dashboard query
// against the lists, so a dashboard cannot ask for a series nothing exports.
package metricnames

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// Dir is where the lists live, relative to the repository's root.
const Dir = "docs/metrics"

// fqName finds the name in what prometheus.Desc.String returns,
// `Desc{fqName: "name", help: …}`.
var fqName = regexp.MustCompile(`^Desc\{fqName: "([^"]+)"`)

// Recorder is a prometheus.Registerer that keeps what is registered with it,
// so that a test can ask a component to register its metrics and list them.
type Recorder struct {
	Collectors []prometheus.Collector
}

var _ prometheus.Registerer = &Recorder{}

// Register implements prometheus.Registerer.
func (r *Recorder) Register(c prometheus.Collector) error {
	r.Collectors = append(r.Collectors, c)
	return nil
}

// MustRegister implements prometheus.Registerer.
func (r *Recorder) MustRegister(cs ...prometheus.Collector) {
	r.Collectors = append(r.Collectors, cs...)
}

// Unregister implements prometheus.Registerer.
func (r *Recorder) Unregister(c prometheus.Collector) bool {
	i := slices.Index(r.Collectors, c)
	if i < 0 {
		return false
	}
	r.Collectors = slices.Delete(r.Collectors, i, i+1)
	return true
}

// Names returns the metric names the recorded collectors describe.
func (r *Recorder) Names() ([]string, error) { return Of(r.Collectors...) }

// Of returns the names of the metrics cs describe.
func Of(cs ...prometheus.Collector) ([]string, error) {
	var names []string
	for _, c := range cs {
		ch := make(chan *prometheus.Desc)
		go func() { c.Describe(ch); close(ch) }()
		for d := range ch {
			m := fqName.FindStringSubmatch(d.String())
			if m == nil {
				// Drain, so the goroutine ends, before failing.
				for range ch {
				}
				return nil, fmt.Errorf("no name in %s", d)
			}
			names = append(names, m[1])
		}
	}
	return names, nil
}

// Root is the repository's root: the nearest directory above the working
// directory (a test's package) holding go.work.
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory")
		}
		dir = parent
	}
}

// Path is the list of component.
func Path(component string) (string, error) {
	root, err := Root()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, Dir, component+".txt"), nil
}

// Format is the list file of names: a header, then the names sorted, one a
// line, each once.
func Format(component, regenerate string, names []string) []byte {
	names = slices.Clone(names)
	slices.Sort(names)
	names = slices.Compact(names)
	var b strings.Builder
	fmt.Fprintf(&b, "# Metrics %s exports, written by its tests from the metrics its code registers:\n", component)
	fmt.Fprintf(&b, "# %s\n", regenerate)
	for _, n := range names {
		b.WriteString(n + "\n")
	}
	return []byte(b.String())
}

// Read returns the names of a list file.
func Read(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		names = append(names, line)
	}
	return names, sc.Err()
}

// ReadAll returns the names of every list, by component.
func ReadAll(root string) (map[string][]string, error) {
	paths, err := filepath.Glob(filepath.Join(root, Dir, "*.txt"))
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range paths {
		names, err := Read(p)
		if err != nil {
			return nil, fmt.Errorf("read metric list: %w", err)
		}
		out[strings.TrimSuffix(filepath.Base(p), ".txt")] = names
	}
	return out, nil
}

// Gathered returns the names of the metric families g gathers: every metric
// registered with it that has a series (a vector without any has none).
func Gathered(g prometheus.Gatherer) ([]string, error) {
	families, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather metrics: %w", err)
	}
	names := make([]string, 0, len(families))
	for _, f := range families {
		names = append(names, f.GetName())
	}
	return names, nil
}

// Named is a metric of k8s.io/component-base, which knows its name before
// it is registered.
type Named interface {
	FQName() string
	IsHidden() bool
}

// Visible returns the names of the metrics ms that are not hidden (a
// deprecated metric is hidden some releases after its deprecation).
func Visible(ms ...Named) []string {
	var names []string
	for _, m := range ms {
		if !m.IsHidden() {
			names = append(names, m.FQName())
		}
	}
	return names
}
