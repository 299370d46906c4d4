package health

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
	"text/tabwriter"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
)

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
	// LoadWatcher is how load-watcher was asked and its usage judged.
	LoadWatcher LoadWatcher
	// Readiness is what load-watcher's /readyz answered; nil when it could
	// not be asked.
	Readiness *Readiness
	// Servers are the k3s servers, when the cluster's nodes carry k3s's
	// server labels; nil otherwise.
	Servers *k3s.Cluster
	// ServersErr says why the servers could not be read.
	ServersErr error
	// LocalDropIn is Options.LocalDropIn.
	LocalDropIn bool
	// Growing are the pods the descheduler warned about recently: their
	// memory keeps growing. GrowingErr says why they could not be read.
	Growing    []Growing
	GrowingErr error
	// HelmController says where k3s's helm-controller is; the command sets
	// it on a k3s server when Ballast is not healthy.
	HelmController string
	// ReleaseName is the release the report is of.
	ReleaseName string
	// Kubeconfigs are those `ballast kubeconfig` generated for the
	// release's components run outside the cluster; KubeconfigsErr says
	// why they could not be read.
	Kubeconfigs    []kubeconfig.Credential
	KubeconfigsErr error
}

// Options locate the installation.
type Options struct {
	Client kubernetes.Interface
	// RestConfig reaches load-watcher: through a port-forward to its pod,
	// which its NetworkPolicy does not block, or when that fails through
	// the API server's service proxy. Without it usage is not read.
	RestConfig  *rest.Config
	Namespace   string
	ReleaseName string
	// LoadWatcher locates load-watcher and says when its usage is stale.
	LoadWatcher LoadWatcher
	// Now defaults to time.Now.
	Now func() time.Time
	// LocalNode is the node name of the host status runs on, if it is one.
	LocalNode string
	// LocalDropIn says whether this host has the k3s scheduler drop-in written.
	LocalDropIn bool
}

// AskLoadWatcher reads the usage the installed load-watcher serves, as
// Collect does, and says how it was reached.
func AskLoadWatcher(ctx context.Context, o Options) (*Usage, string, error) {
	scheme := "http"
	if o.LoadWatcher.TLS {
		scheme = "https"
	}
	var lw *appsv1.Deployment
	d, err := o.Client.AppsV1().Deployments(o.Namespace).Get(ctx, charts.ComponentFullname(o.ReleaseName, "load-watcher"), metav1.GetOptions{})
	if err == nil {
		scheme, lw = loadWatcherScheme(d), d
	}
	var names []string
	if nodes, err := o.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range nodes.Items {
			names = append(names, n.Name)
		}
	}
	u, _, via, err := askLoadWatcher(ctx, o, lw, scheme, names)
	return u, via, err
}

// Collect reads Deployments, nodes and the opt-in policy, and asks
// load-watcher for its usage (see askLoadWatcher).
func Collect(ctx context.Context, o Options) Report {
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	r := Report{Namespace: o.Namespace, ReleaseName: o.ReleaseName, Now: now(), LoadWatcher: o.LoadWatcher}
	scheme := "http"
	if o.LoadWatcher.TLS {
		scheme = "https"
	}
	var lw *appsv1.Deployment
	for _, c := range charts.Components {
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
	r.LocalDropIn = o.LocalDropIn
	r.Growing, r.GrowingErr = growingPods(ctx, o.Client, r.Now)
	r.Kubeconfigs, r.KubeconfigsErr = kubeconfig.List(ctx, o.Client, o.Namespace, o.ReleaseName)
	var names []string
	nodes, err := o.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		r.ServersErr = fmt.Errorf("list nodes: %w", err)
	} else {
		for _, n := range nodes.Items {
			names = append(names, n.Name)
		}
		r.Servers, r.ServersErr = servers(ctx, o.Client, nodes.Items, o.LocalNode)
	}
	u, ready, via, err := askLoadWatcher(ctx, o, lw, scheme, names)
	r.Usage, r.Readiness, r.UsageVia = u, ready, via
	if err != nil {
		r.UsageErr = err
	}
	return r
}

// askLoadWatcher reads load-watcher's usage and readiness with its own
// client: through a port-forward to its pod when o.RestConfig is set, else
// (or when that fails) through the API server's service proxy. It returns
// the usage, the readiness (nil when it could not be read), how
// load-watcher was reached, or why it could not be.
func askLoadWatcher(ctx context.Context, o Options, lw *appsv1.Deployment, scheme string, nodes []string) (*Usage, *Readiness, string, error) {
	if o.RestConfig == nil {
		return nil, nil, "", errors.New("no connection to the API server to reach load-watcher through")
	}
	var forwardErr error
	if lw != nil {
		port, pod, stop, err := forwardTo(ctx, o.RestConfig, o.Client, lw, o.LoadWatcher.Port)
		forwardErr = err
		if err == nil {
			defer stop()
			u, ready, err := read(ctx, fmt.Sprintf("%s://127.0.0.1:%d", scheme, port), insecureClient(), nodes, o.LoadWatcher.StaleAfter, true)
			via := "port-forward to pod " + pod
			if err == nil {
				return u, ready, via, nil
			}
			if ready != nil && !ready.Ready {
				// Reached, and it says why it has nothing to serve.
				return nil, ready, via, fmt.Errorf("load-watcher (pod %s) is not ready: %s", pod, ready.Reason)
			}
			forwardErr = fmt.Errorf("through a port-forward to pod %s: %w", pod, err)
		}
	}
	svc := charts.ComponentFullname(o.ReleaseName, "load-watcher")
	proxy, _, err := rest.DefaultServerUrlFor(o.RestConfig)
	var hc *http.Client
	if err == nil {
		hc, err = rest.HTTPClientFor(o.RestConfig)
	}
	if err == nil {
		proxy.Path = path.Join(proxy.Path, "/api/v1/namespaces", o.Namespace, "services", fmt.Sprintf("%s:%s:%d", scheme, svc, o.LoadWatcher.Port), "proxy")
		var u *Usage
		var ready *Readiness
		if u, ready, err = read(ctx, proxy.String(), hc, nodes, o.LoadWatcher.StaleAfter, false); err == nil {
			return u, ready, "the API server's service proxy", nil
		}
	}
	// The API server is no pod: load-watcher's NetworkPolicy lets it
	// through only where the CNI lets a node reach its own pods, i.e.
	// when both run on one node (docs/load-watcher.md#security).
	err = fmt.Errorf("ask load-watcher (service %s/%s, %s, through the API server; on another node than the API server "+
		"load-watcher's NetworkPolicy needs the API server's address in load-watcher.networkPolicy.apiFrom): %w", o.Namespace, svc, scheme, err)
	if forwardErr != nil {
		err = fmt.Errorf("%w; before that, %v", err, forwardErr)
	}
	return nil, nil, "", err
}

// loadWatcherScheme is https when load-watcher's Deployment serves TLS (the
// chart's global.loadWatcher.tls), which the API server proxies to without
// verifying the certificate, and http otherwise: the Deployment says what
// runs, whatever the release's values say.
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
		r.printHelmController(w)
		return r.printKubeconfigs(w)
	}
	via := ""
	if r.UsageVia != "" {
		via = " (load-watcher reached by " + r.UsageVia + ")"
	}
	fmt.Fprintf(w, "usage: from %s%s\n\n", r.Usage.Snapshot.Source, via)
	if err := PrintNodes(w, r.Usage.Window, r.Usage.Rows(r.Now)); err != nil {
		return err
	}
	if r.Usage.fresh() == 0 {
		fmt.Fprintln(w, "\n"+noFreshUsage)
	}
	switch {
	case r.GrowingErr != nil:
		fmt.Fprintf(w, "\npods whose memory keeps growing: unknown: %v\n", r.GrowingErr)
	case len(r.Growing) > 0:
		fmt.Fprintln(w)
		if err := writeGrowing(w, r.Growing, r.Now); err != nil {
			return err
		}
	}
	r.printHelmController(w)
	return r.printKubeconfigs(w)
}

func (r Report) printHelmController(w io.Writer) {
	if r.HelmController != "" {
		fmt.Fprintf(w, "\nk3s's helm-controller: %s\n", r.HelmController)
	}
}

// servers reads the k3s servers and the holder of their scheduler lease;
// nil when no node is a k3s server.
func servers(ctx context.Context, client kubernetes.Interface, nodes []corev1.Node, local string) (*k3s.Cluster, error) {
	cl := k3s.Cluster{Servers: k3s.Servers(nodes), Local: local}
	if len(cl.Servers) == 0 {
		return nil, nil
	}
	var err error
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
