package startcheck

import (
	"fmt"
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	deschedopts "github.com/ballast-sched/ballast/descheduler/pkg/options"
	lwopts "github.com/ballast-sched/ballast/load-watcher/pkg/options"
	schedopts "github.com/ballast-sched/ballast/scheduler/pkg/options"
)

// scheduling is the Component of a Refusal of what the rendered objects
// would do together: leave pods with no scheduler, or a scheduler with no
// usage. Each component would start; the cluster would stop scheduling.
const scheduling = "scheduling"

// defaultScheduler is the schedulerName of every pod that names none.
const defaultScheduler = "default-scheduler"

// mutatedSchedulerName finds the schedulerName a MutatingAdmissionPolicy
// sets on pods.
var mutatedSchedulerName = regexp.MustCompile(`schedulerName:\s*"([^"]+)"`)

// running is one component's Deployment as it would run.
type running struct {
	component string
	d         *appsv1.Deployment
	c         container
	// replicas is the Deployment's replicas, 1 when not given.
	replicas int32
}

// schedulingRefusals returns what the rendered objects would do together
// that stops scheduling: a component's Deployment with no replica; in
// replaceDefault mode (the cluster's own
// scheduler renamed) no running Ballast scheduler serving default-scheduler;
// a namespace opt-in policy naming a scheduler nothing runs; a scheduler or
// descheduler reading usage from the release's load-watcher Service with no
// load-watcher pod behind it; usage that turns stale between two samples.
func schedulingRefusals(objs []object, cs []container, replaceDefault bool) []Refusal {
	runs := runningComponents(objs, cs)
	served := sets.New[string]() // by a scheduler with at least one replica
	for _, r := range runs {
		if r.component == "scheduler" && r.replicas > 0 {
			served.Insert(profiles(r.c)...)
		}
	}
	var out []Refusal
	for _, r := range runs {
		if r.replicas == 0 {
			out = append(out, Refusal{Component: scheduling, Workload: r.c.Workload, Err: fmt.Errorf(
				"it would run no %s pod: %s", r.component, noReplica[r.component])})
		}
	}
	if replaceDefault && !served.Has(defaultScheduler) {
		out = append(out, Refusal{Component: scheduling, Workload: "every pod", Err: fmt.Errorf(
			"in replaceDefault mode the cluster's own scheduler no longer serves %s, and no running Ballast scheduler does: no pod would be scheduled again",
			defaultScheduler)})
	}
	for _, o := range objs {
		if o.kind != "MutatingAdmissionPolicy" {
			continue
		}
		for _, m := range mutatedSchedulerName.FindAllSubmatch(o.raw, -1) {
			if name := string(m[1]); !served.Has(name) {
				out = append(out, Refusal{Component: scheduling, Workload: o.ref(), Err: fmt.Errorf(
					"the namespace opt-in gives new pods schedulerName %s, and no running Ballast scheduler serves it: those pods would never be scheduled", name)})
			}
		}
	}
	return append(out, usageRefusals(objs, runs)...)
}

// runningComponents pairs each Ballast component's Deployment with its
// container as it would start.
func runningComponents(objs []object, cs []container) []running {
	byWorkload := map[string]container{}
	for _, c := range cs {
		byWorkload[c.Workload] = c
	}
	var out []running
	for _, o := range objs {
		d, ok := o.typed.(*appsv1.Deployment)
		if !ok || d.Labels[componentLabel] == "" {
			continue
		}
		c, ok := byWorkload["Deployment/"+d.Name]
		if !ok {
			continue
		}
		r := running{component: d.Labels[componentLabel], d: d, c: c, replicas: 1}
		if d.Spec.Replicas != nil {
			r.replicas = *d.Spec.Replicas
		}
		out = append(out, r)
	}
	return out
}

// profiles are the schedulerNames a scheduler container's configuration
// serves (its --config file, as mounted).
func profiles(c container) []string {
	var config string
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--config="); ok {
			config = v
		}
	}
	var cfg struct {
		Profiles []struct {
			SchedulerName string `json:"schedulerName"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(c.Files[config], &cfg); err != nil {
		return nil // the scheduler's own check refuses it
	}
	var out []string
	for _, p := range cfg.Profiles {
		out = append(out, cmpOr(p.SchedulerName, defaultScheduler))
	}
	return out
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// usageRefusals checks that every scheduler and descheduler reading the
// release's own load-watcher has a load-watcher pod behind its Service,
// and judges usage fresh for longer than load-watcher takes between two
// samples; and that load-watcher does not call its own samples stale
// before the next is due.
func usageRefusals(objs []object, runs []running) []Refusal {
	var out []Refusal
	watchers := map[string]time.Duration{} // Deployment name → period
	for _, r := range runs {
		if r.component != "load-watcher" {
			continue
		}
		o := lwopts.Default()
		fs := componentFlags(o.AddFlags)
		if fs.Parse(r.c.Args) != nil || lwopts.ApplyEnv(fs, r.c.LookupEnv) != nil {
			continue // load-watcher's own check refuses it
		}
		watchers[r.d.Name] = o.Period
		if o.StaleAfter != 0 && o.StaleAfter <= o.Period {
			out = append(out, Refusal{Component: scheduling, Workload: r.c.Workload, Err: fmt.Errorf(
				"load-watcher would call every node stale %s after its sample, before the next sample %s later, and report itself not ready between samples",
				o.StaleAfter, o.Period)})
		}
	}
	for _, r := range runs {
		var address string
		var staleAfter time.Duration
		switch r.component {
		case "scheduler":
			o := schedopts.NewOptions()
			if componentFlags(o.AddFlags).Parse(r.c.Args) != nil || o.LoadWatcherMode != schedopts.ModeService {
				continue
			}
			address, staleAfter = o.LoadWatcherAddress, o.StaleAfter
		case "descheduler":
			o := deschedopts.NewOptions()
			if componentFlags(o.AddFlags).Parse(r.c.Args) != nil {
				continue
			}
			address, staleAfter = o.LoadWatcherAddress, o.LoadWatcherStaleAfter
		default:
			continue
		}
		svc, ok := ownLoadWatcher(r.d, address)
		if !ok {
			continue // a load-watcher of someone else's: not in this manifest
		}
		backends := serving(objs, runs, svc)
		if len(backends) == 0 {
			out = append(out, Refusal{Component: scheduling, Workload: r.c.Workload, Err: fmt.Errorf(
				"it reads usage from %s, and no load-watcher pod would run behind Service %s: the %s would have no usage to go by",
				address, svc, r.component)})
			continue
		}
		for _, lw := range backends {
			if period, ok := watchers[lw]; ok && staleAfter <= period {
				out = append(out, Refusal{Component: scheduling, Workload: r.c.Workload, Err: fmt.Errorf(
					"it calls usage stale after %s, and Deployment/%s samples every %s: every node's usage would be stale between two samples, and %s",
					staleAfter, lw, period, staleMeans[r.component])})
			}
		}
	}
	return out
}

// noReplica is what a component's Deployment with no replica leaves undone.
var noReplica = map[string]string{
	"scheduler":    "pods that ask for Ballast's scheduler would never be scheduled",
	"load-watcher": "its readers would have no usage to go by",
	"descheduler":  "nothing would ever be moved",
}

// staleMeans is what a reader of load-watcher does when every node's usage
// is stale.
var staleMeans = map[string]string{
	"scheduler":   "the scheduler would place pods by their requests alone",
	"descheduler": "the descheduler would move nothing",
}

// componentFlags is a flag set with only a component's own flags, which
// passes over the others (kube-scheduler's, the descheduler's).
func componentFlags(add func(*pflag.FlagSet)) *pflag.FlagSet {
	fs := pflag.NewFlagSet("component", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	add(fs)
	return fs
}

// ownLoadWatcher returns namespace/name of the release's own load-watcher
// Service when address is it (the chart's address when
// global.loadWatcher.address is empty).
func ownLoadWatcher(d *appsv1.Deployment, address string) (string, bool) {
	u, err := url.Parse(address)
	if err != nil {
		return "", false
	}
	release := d.Labels["app.kubernetes.io/instance"]
	host := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(u.Hostname(), "."), ".cluster.local"), ".svc")
	name, ns, _ := strings.Cut(host, ".")
	ns = cmpOr(ns, d.Namespace)
	if release == "" || name != charts.ComponentFullname(release, "load-watcher") || ns != d.Namespace {
		return "", false
	}
	return ns + "/" + name, true
}

// serving returns the names of the load-watcher Deployments with a replica
// whose pods the Service ns/name selects.
func serving(objs []object, runs []running, svc string) []string {
	ns, name, _ := strings.Cut(svc, "/")
	var sel labels.Selector
	for _, o := range objs {
		if s, ok := o.typed.(*corev1.Service); ok && s.Name == name && cmpOr(s.Namespace, ns) == ns && len(s.Spec.Selector) > 0 {
			sel = labels.SelectorFromSet(s.Spec.Selector)
		}
	}
	if sel == nil {
		return nil
	}
	var out []string
	for _, r := range runs {
		if r.component == "load-watcher" && r.replicas > 0 && cmpOr(r.d.Namespace, ns) == ns && sel.Matches(labels.Set(r.d.Spec.Template.Labels)) {
			out = append(out, r.d.Name)
		}
	}
	sort.Strings(out)
	return out
}
