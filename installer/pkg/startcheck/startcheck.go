// Package startcheck checks what a chart renders before anything is written:
// the API server's rules for the fields values reach (checked offline), each
// Ballast component's own start-up checks (the scheduler's configuration
// scheme and plugin args, the descheduler's policy scheme and plugins,
// load-watcher's flags), and what the objects would do together (a cluster
// left with no scheduler, a scheduler with no usage). A refusal names the
// values keys it comes from, found by rendering again without each key
// given.
//
// The chart's schema and template checks refuse most bad values first, for
// `helm install` users too; the components' checks are the one source of
// truth behind them, and a test holds the schema to them
// (TestChartRefusesWhatComponentsRefuse).
package startcheck

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/startup"
	deschedulercheck "github.com/ballast-sched/ballast/descheduler/pkg/check"
	loadwatchercheck "github.com/ballast-sched/ballast/load-watcher/pkg/check"
	schedulercheck "github.com/ballast-sched/ballast/scheduler/pkg/check"
)

// checks are the components' own start-up checks, by component label.
var checks = map[string]func(context.Context, startup.Container) error{
	"scheduler":    schedulercheck.Check,
	"descheduler":  deschedulercheck.Check,
	"load-watcher": loadwatchercheck.Check,
}

// apiServer is the Component of a Refusal of objects that would not even
// be stored, or whose pods would never run.
const apiServer = "Kubernetes API"

// Refusal is what one component, the API server or the cluster would refuse.
type Refusal struct {
	// Component is the component's chart name (scheduler, descheduler,
	// load-watcher), the Kubernetes API, or scheduling: what the objects
	// would do together.
	Component string
	// Workload is the object concerned: Deployment/NAME.
	Workload string
	// Err is the component's own message.
	Err error
	// Keys are the values given that the refusal comes from, as key=value:
	// without any one of them, the component would not refuse the same
	// way. Empty when the refusal comes from the chart's defaults, or only
	// from several values together.
	Keys []string
}

func (r Refusal) Error() string {
	from := "the chart's defaults or several values together"
	if len(r.Keys) > 0 {
		from = strings.Join(r.Keys, ", ")
	}
	switch r.Component {
	case apiServer:
		return fmt.Sprintf("%s: the API server would refuse %s: %v", from, r.Workload, r.Err)
	case scheduling:
		return fmt.Sprintf("%s: scheduling would stop (%s): %v", from, r.Workload, r.Err)
	}
	return fmt.Sprintf("%s: the %s would refuse this at start (%s): %v", from, r.Component, r.Workload, r.Err)
}

// Manifest checks the objects of manifest before anything is written: the
// API server's rules for the fields values reach, every component's own
// start-up check on the workload that runs it, and what the objects would
// do together (scheduling). replaceDefault says the cluster's own scheduler
// is renamed (global.schedulerMode=replaceDefault), so that Ballast's must
// serve every pod.
func Manifest(ctx context.Context, manifest string, replaceDefault bool) ([]Refusal, error) {
	objs, err := objects(manifest)
	if err != nil {
		// What the API server would refuse to store.
		return []Refusal{{Component: apiServer, Workload: "the rendered manifests", Err: err}}, nil
	}
	out := apiRefusals(objs)
	cs, err := containers(manifest)
	if err != nil {
		return append(out, Refusal{Component: apiServer, Workload: "the rendered manifests", Err: err}), nil
	}
	// The components' start-up logs are theirs, not the installer's.
	ctx = klog.NewContext(ctx, logr.Discard())
	for _, c := range cs {
		check, ok := checks[c.component]
		if !ok {
			continue
		}
		if err := check(ctx, c.Container); err != nil {
			out = append(out, Refusal{Component: c.component, Workload: c.Workload, Err: err})
		}
	}
	return append(out, schedulingRefusals(objs, cs, replaceDefault)...), nil
}

// ReplaceDefault reports whether vals, over the chart's defaults, set
// global.schedulerMode=replaceDefault.
func ReplaceDefault(vals map[string]any) bool {
	const replace = "replaceDefault"
	if g, ok := vals["global"].(map[string]any); ok {
		if m, ok := g["schedulerMode"].(string); ok {
			return m == replace
		}
	}
	c, err := charts.Load()
	if err != nil {
		return false
	}
	g, _ := c.Values["global"].(map[string]any)
	return g["schedulerMode"] == replace
}

// Render renders the chart as charts.Render does and runs every component's
// check on the result. When a component would refuse, the error names the
// values keys the refusal comes from, with the component's own message.
func Render(ctx context.Context, opts charts.RenderOptions) (manifest, notes string, err error) {
	manifest, notes, err = charts.Render(ctx, opts)
	if err != nil {
		return "", "", err
	}
	refusals, err := Manifest(ctx, manifest, ReplaceDefault(opts.Values))
	if err != nil {
		return "", "", err
	}
	if len(refusals) == 0 {
		return manifest, notes, nil
	}
	errs := make([]error, 0, len(refusals))
	for _, r := range refusals {
		r.Keys = attribute(ctx, opts, r)
		errs = append(errs, r)
	}
	return "", "", errors.Join(errs...)
}

// attribute returns the values given (key=value) without which r goes
// away or changes: each leaf of opts.Values is taken out in turn, the chart
// rendered again and the component checked again.
func attribute(ctx context.Context, opts charts.RenderOptions, r Refusal) []string {
	var keys []string
	for _, leaf := range leaves(opts.Values, nil) {
		o := opts
		o.Chart = nil // a render prunes the chart it is given
		o.Values = without(opts.Values, leaf.path)
		manifest, _, err := charts.Render(ctx, o)
		if err != nil {
			continue // the values no longer render: says nothing of r
		}
		again, err := Manifest(ctx, manifest, ReplaceDefault(o.Values))
		if err != nil || !refusesAlike(again, r) {
			keys = append(keys, leaf.String())
		}
	}
	sort.Strings(keys)
	return keys
}

// refusesAlike reports whether refusals hold r's refusal, word for word.
func refusesAlike(refusals []Refusal, r Refusal) bool {
	for _, o := range refusals {
		if o.Workload == r.Workload && o.Err.Error() == r.Err.Error() {
			return true
		}
	}
	return false
}

// leaf is one value given: a key that is not a map.
type leaf struct {
	path  []string
	value any
}

func (l leaf) String() string {
	return fmt.Sprintf("%s=%v", strings.Join(l.path, "."), l.value)
}

// leaves lists the values of vals that are not maps, by key path.
func leaves(vals map[string]any, prefix []string) []leaf {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []leaf
	for _, k := range keys {
		p := append(append([]string(nil), prefix...), k)
		if m, ok := vals[k].(map[string]any); ok && len(m) > 0 {
			out = append(out, leaves(m, p)...)
			continue
		}
		out = append(out, leaf{path: p, value: vals[k]})
	}
	return out
}

// without returns a copy of vals without the key at path (maps on the way
// are copied, the rest shared).
func without(vals map[string]any, path []string) map[string]any {
	out := make(map[string]any, len(vals))
	for k, v := range vals {
		out[k] = v
	}
	if len(path) == 1 {
		delete(out, path[0])
		return out
	}
	if m, ok := out[path[0]].(map[string]any); ok {
		out[path[0]] = without(m, path[1:])
	}
	return out
}
