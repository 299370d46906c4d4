package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/cluster"
)

// startCluster starts a control plane for one test; -short skips the test.
func startCluster(t *testing.T) (*cluster.Cluster, context.Context) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	return c, t.Context()
}

func createNamespace(t *testing.T, ctx context.Context, client kubernetes.Interface, name string) {
	t.Helper()
	_, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// descheduler is the client of the chart's descheduler: admin credentials
// impersonating its ServiceAccount, so that it has exactly its rights.
func descheduler(t *testing.T, c *cluster.Cluster) kubernetes.Interface {
	t.Helper()
	cfg := rest.CopyConfig(c.RestConfig)
	ns := charts.DefaultNamespace
	cfg.Impersonate = rest.ImpersonationConfig{UserName: "system:serviceaccount:" + ns + ":ballast-descheduler",
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// installDescheduler creates what the chart renders with values for the
// descheduler to run with, but its Deployment: its ServiceAccount, RBAC,
// admission policies and moves ConfigMap, in Ballast's namespace.
func installDescheduler(t *testing.T, ctx context.Context, c *cluster.Cluster, values map[string]any) {
	t.Helper()
	createNamespace(t, ctx, c.Client, charts.DefaultNamespace)
	manifest, _, err := charts.Render(ctx, charts.RenderOptions{Values: values})
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.RestConfig)
	if err != nil {
		t.Fatal(err)
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Client.Discovery()))
	kinds := map[string]bool{"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
		"ConfigMap": true, "ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true}
	created := 0
	for _, doc := range strings.Split(manifest, "\n---") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("decode rendered document: %v", err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if len(obj) == 0 || !kinds[u.GetKind()] || !strings.HasPrefix(u.GetName(), "ballast-descheduler") {
			continue
		}
		gvk := u.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			t.Fatalf("%s %s: %v", gvk.Kind, u.GetName(), err)
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			ri = dyn.Resource(mapping.Resource).Namespace(u.GetNamespace())
		}
		if _, err := ri.Create(ctx, u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s %s: %v", gvk.Kind, u.GetName(), err)
		}
		created++
	}
	if created == 0 {
		t.Fatal("the chart rendered nothing of the descheduler's")
	}
}

// refusedByPolicy reports whether err is a refusal by the admission policy
// named policy.
func refusedByPolicy(err error, policy string) bool {
	return apierrors.IsForbidden(err) && strings.Contains(err.Error(), "ValidatingAdmissionPolicy '"+policy+"'")
}

func waitFor(t *testing.T, ctx context.Context, what string, timeout time.Duration, cond func(context.Context) (bool, error)) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if ok {
			return
		}
		lastErr = err
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %s waiting for %s (last error: %v)", timeout, what, lastErr)
		case <-time.After(250 * time.Millisecond):
		}
	}
}
