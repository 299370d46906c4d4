//go:build e2e

package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/e2e/pkg/lane"
)

// figures are what the lane measures for docs/performance.md. They are
// reported, never asserted: a test must not fail on a timing or a size.
type figures struct {
	// push is how long `make push` took into the lane's registry.
	push           time.Duration
	installToReady time.Duration
	// memory is each Ballast container's working set, as the kubelet
	// measures it, keyed by component.
	memory map[string]int64
}

func (f *figures) report(t *testing.T, path string) {
	var b strings.Builder
	fmt.Fprintf(&b, "| figure | value |\n|---|---|\n")
	if f.push > 0 {
		fmt.Fprintf(&b, "| `make push` of the host platform's images into a registry on the host | %s |\n", f.push.Round(100*time.Millisecond))
	}
	if f.installToReady > 0 {
		fmt.Fprintf(&b, "| `ballast install` to all Deployments Ready | %s |\n", f.installToReady.Round(100*time.Millisecond))
	}
	names := make([]string, 0, len(f.memory))
	for n := range f.memory {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "| %s idle working set | %.1f MiB |\n", n, float64(f.memory[n])/(1<<20))
	}
	t.Logf("figures:\n%s", b.String())
	if path != "" {
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Errorf("writing figures: %v", err)
		}
	}
}

// containerMemory reads each Ballast pod's working set from metrics.k8s.io,
// which metrics-server takes from the kubelet.
func containerMemory(ctx context.Context, t *testing.T, l *lane.Lane) map[string]int64 {
	t.Helper()
	type podMetrics struct {
		Items []struct {
			Metadata   metav1.ObjectMeta `json:"metadata"`
			Containers []struct {
				Name  string            `json:"name"`
				Usage map[string]string `json:"usage"`
			} `json:"containers"`
		} `json:"items"`
	}
	out := map[string]int64{}
	poll(ctx, t, "pod metrics of Ballast's three components", 2*time.Minute, func(ctx context.Context) (bool, string) {
		raw, err := l.Client.CoreV1().RESTClient().Get().
			AbsPath("/apis/metrics.k8s.io/v1beta1/namespaces/" + ballastNamespace + "/pods").DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		var pm podMetrics
		if err := json.Unmarshal(raw, &pm); err != nil {
			return false, err.Error()
		}
		clear(out)
		for _, p := range pm.Items {
			for _, c := range p.Containers {
				q, err := resource.ParseQuantity(c.Usage["memory"])
				if err != nil {
					return false, err.Error()
				}
				out[p.Metadata.Labels["app.kubernetes.io/name"]] += q.Value()
			}
		}
		return len(out) >= 3, string(raw)
	})
	return out
}

// waitNothingLeft waits until no object of the release remains: nothing in
// Ballast's namespace but what Kubernetes puts in every namespace, and no
// cluster-scoped object labelled as part of Ballast. It returns what is left
// when the wait ends.
func waitNothingLeft(ctx context.Context, t *testing.T, l *lane.Lane) []string {
	t.Helper()
	cfg := rest.CopyConfig(l.Config)
	// Listing every resource touches deprecated ones (v1 Endpoints).
	cfg.WarningHandler = rest.NoWarnings{}
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lists, err := discovery.ServerPreferredResources(disco)
	if err != nil {
		t.Logf("discovery (partial): %v", err)
	}
	// Every namespace has these; they are not Ballast's.
	builtin := map[string]bool{"ServiceAccount/default": true, "ConfigMap/kube-root-ca.crt": true}
	var left []string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left = left[:0]
		for _, list := range lists {
			gv, err := schema.ParseGroupVersion(list.GroupVersion)
			if err != nil {
				continue
			}
			for _, r := range list.APIResources {
				if !slices.Contains(r.Verbs, "list") || r.Kind == "Event" || strings.Contains(r.Name, "/") {
					continue
				}
				res := dyn.Resource(gv.WithResource(r.Name))
				var opts metav1.ListOptions
				var items []string
				if r.Namespaced {
					objs, err := res.Namespace(ballastNamespace).List(ctx, opts)
					if err != nil {
						continue
					}
					for _, o := range objs.Items {
						if !builtin[r.Kind+"/"+o.GetName()] {
							items = append(items, r.Kind+"/"+o.GetName())
						}
					}
				} else {
					opts.LabelSelector = "app.kubernetes.io/part-of=ballast"
					objs, err := res.List(ctx, opts)
					if err != nil {
						continue
					}
					for _, o := range objs.Items {
						items = append(items, r.Kind+"/"+o.GetName())
					}
				}
				left = append(left, items...)
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(2 * time.Second)
	}
}
