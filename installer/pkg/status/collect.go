package status

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// Components are Ballast's Deployments, by component name.
var Components = []string{"load-watcher", "scheduler", "descheduler"}

// Component is the health of one Deployment.
type Component struct {
	Name      string
	Found     bool
	Ready     bool
	Replicas  int32
	Available int32
}

// Report is everything `ballast status` shows.
type Report struct {
	Namespace  string
	Components []Component
	Usage      *Usage
	// UsageErr says why usage is missing.
	UsageErr error
	// OptIn says whether new pods of labelled namespaces get Ballast's
	// schedulerName (the chart's MutatingAdmissionPolicy), and if not why.
	OptIn string
	// Now is when the report was taken, for ages.
	Now time.Time
	// UsageVia says how load-watcher was reached: a port-forward to its pod,
	// or the API server's service proxy.
	UsageVia string
	// Servers are the k3s servers, when the cluster's nodes carry k3s's
	// server labels; nil otherwise.
	Servers *k3s.Cluster
	// ServersErr says why the servers could not be read.
	ServersErr error
	// LocalDropIn is Options.LocalDropIn.
	LocalDropIn bool
}

// Options locate the installation.
type Options struct {
	Client kubernetes.Interface
	// RestConfig, when set, lets status reach load-watcher through a
	// port-forward to its pod, which its NetworkPolicy does not block;
	// without it, or when that fails, through the API server's service proxy.
	RestConfig  *rest.Config
	Namespace   string
	ReleaseName string
	// LoadWatcherPort is the load-watcher Service port.
	LoadWatcherPort int
	// Now defaults to time.Now.
	Now func() time.Time
	// LocalNode is the node name of the host status runs on, if it is one.
	LocalNode string
	// LocalDropIn says whether this host has the k3s scheduler drop-in written.
	LocalDropIn bool
}

// Collect reads Deployments and asks load-watcher for its latest usage:
// through a port-forward to its pod when RestConfig is set, else (or when
// that fails) through the API server's service proxy.
func Collect(ctx context.Context, o Options) Report {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	r := Report{Namespace: o.Namespace, Now: now()}
	scheme := "http"
	var lw *appsv1.Deployment
	for _, c := range Components {
		comp := Component{Name: c}
		d, err := o.Client.AppsV1().Deployments(o.Namespace).Get(ctx, charts.ComponentFullname(o.ReleaseName, c), metav1.GetOptions{})
		if err == nil {
			comp.Found = true
			comp.Ready = helminstall.Ready(d)
			if c == "load-watcher" {
				scheme, lw = loadWatcherScheme(d), d
			}
			comp.Available = d.Status.AvailableReplicas
			comp.Replicas = 1
			if d.Spec.Replicas != nil {
				comp.Replicas = *d.Spec.Replicas
			}
		} else if !apierrors.IsNotFound(err) {
			r.UsageErr = fmt.Errorf("read Deployment %s: %w", c, err)
		}
		r.Components = append(r.Components, comp)
	}
	r.OptIn = optIn(ctx, o.Client, o.ReleaseName)
	r.Servers, r.ServersErr = servers(ctx, o.Client, o.LocalNode)
	r.LocalDropIn = o.LocalDropIn
	svc := charts.ComponentFullname(o.ReleaseName, "load-watcher")
	var forwardErr error
	var body []byte
	if o.RestConfig != nil && lw != nil {
		var pod string
		body, pod, forwardErr = forwardGet(ctx, o.RestConfig, o.Client, lw, o.LoadWatcherPort, scheme, "/watcher")
		if forwardErr == nil {
			r.UsageVia = "port-forward to pod " + pod
		}
	}
	if body == nil {
		var err error
		body, err = o.Client.CoreV1().Services(o.Namespace).
			ProxyGet(scheme, svc, fmt.Sprint(o.LoadWatcherPort), "/watcher", nil).DoRaw(ctx)
		if err != nil {
			// The API server is no pod: load-watcher's NetworkPolicy lets it
			// through only where the CNI lets a node reach its own pods, i.e.
			// when both run on one node (docs/load-watcher.md#security).
			r.UsageErr = fmt.Errorf("ask load-watcher (service %s/%s, %s, through the API server; on another node than the API server "+
				"load-watcher's NetworkPolicy needs the API server's address in load-watcher.networkPolicy.apiFrom): %w", o.Namespace, svc, scheme, err)
			if forwardErr != nil {
				r.UsageErr = fmt.Errorf("%w; before that, %v", r.UsageErr, forwardErr)
			}
			return r
		}
		r.UsageVia = "the API server's service proxy"
	}
	u, err := parseWatcher(body)
	if err != nil {
		r.UsageErr = err
		return r
	}
	r.Usage = &u
	return r
}

// loadWatcherScheme is https when load-watcher serves TLS (the chart's
// global.loadWatcher.tls), which the API server proxies to without
// verifying the certificate, and http otherwise.
func loadWatcherScheme(d *appsv1.Deployment) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		for _, a := range c.Args {
			if strings.HasPrefix(a, "--tls-cert-file=") {
				return "https"
			}
		}
	}
	return "http"
}

// Healthy reports whether every installed component is ready and usage is available.
func (r Report) Healthy() bool {
	for _, c := range r.Components {
		if c.Found && !c.Ready {
			return false
		}
	}
	return r.Usage != nil
}

// Print writes the report.
func (r Report) Print(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "COMPONENT\tSTATUS\tAVAILABLE")
	for _, c := range r.Components {
		state, avail := "not installed", "-"
		if c.Found {
			state, avail = "not ready", fmt.Sprintf("%d/%d", c.Available, c.Replicas)
			if c.Ready {
				state = "ready"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, state, avail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	switch {
	case r.ServersErr != nil:
		fmt.Fprintf(w, "k3s servers: unknown: %v\n\n", r.ServersErr)
	case r.Servers != nil:
		WriteServers(w, *r.Servers, r.LocalDropIn)
		fmt.Fprintln(w)
	}
	if r.OptIn != "" {
		fmt.Fprintf(w, "namespace opt-in: %s\n", r.OptIn)
	}
	if r.Usage == nil {
		fmt.Fprintf(w, "usage: unavailable: %v\n", r.UsageErr)
		return nil
	}
	age := "unknown age"
	if !r.Usage.Time.IsZero() {
		age = r.Now.Sub(r.Usage.Time).Round(time.Second).String() + " old"
	}
	via := ""
	if r.UsageVia != "" {
		via = " (load-watcher reached by " + r.UsageVia + ")"
	}
	fmt.Fprintf(w, "usage: from %s, window %s, %s%s\n\n", r.Usage.Source, r.Usage.Window, age, via)
	return PrintNodes(w, r.Usage.Nodes)
}

// servers reads the k3s servers and the holder of their scheduler lease;
// nil when no node is a k3s server.
func servers(ctx context.Context, client kubernetes.Interface, local string) (*k3s.Cluster, error) {
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	cl := k3s.Cluster{Servers: k3s.Servers(nodes.Items), Local: local}
	if len(cl.Servers) == 0 {
		return nil, nil
	}
	if cl.Leader, err = k3s.SchedulerLeader(ctx, client); err != nil {
		return nil, err
	}
	return &cl, nil
}

// optIn describes the namespace opt-in policy the chart creates in second
// mode, where the API server serves MutatingAdmissionPolicy.
func optIn(ctx context.Context, client kubernetes.Interface, release string) string {
	name := charts.OptInPolicyName(release)
	b, err := client.AdmissionregistrationV1().MutatingAdmissionPolicyBindings().Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		sel := "every namespace"
		if ns := b.Spec.MatchResources; ns != nil && ns.NamespaceSelector != nil {
			if s, err := metav1.LabelSelectorAsSelector(ns.NamespaceSelector); err == nil {
				sel = "namespaces matching " + s.String()
			}
		}
		return "on: new pods in " + sel + " get Ballast's schedulerName (MutatingAdmissionPolicy " + name + ")"
	case !apierrors.IsNotFound(err):
		return "unknown: " + err.Error()
	}
	if !servesAdmissionPolicies(client) {
		return "off: this API server does not serve MutatingAdmissionPolicy (Kubernetes 1.36+)"
	}
	return "off (optIn.enabled is false, or replaceDefault mode, where every pod is Ballast's)"
}

func servesAdmissionPolicies(client kubernetes.Interface) bool {
	list, err := client.Discovery().ServerResourcesForGroupVersion("admissionregistration.k8s.io/v1")
	if err != nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == "mutatingadmissionpolicybindings" {
			return true
		}
	}
	return false
}
