package integration

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/installer/pkg/app"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

// helmControllerFinalizer is the finalizer helm-controller keeps on a HelmChart until its release is gone.
const helmControllerFinalizer = "wrangler.cattle.io/on-helm-chart-remove"

// TestUninstallOnK3sDeletesTheHelmChartThroughTheAPI plays k3s: the manifest
// `ballast install` wrote is applied to the API server, and a stand-in for
// helm-controller releases its finalizer once the HelmChart is deleted.
// `ballast uninstall` must delete the object, wait for it, then remove the file.
func TestUninstallOnK3sDeletesTheHelmChartThroughTheAPI(t *testing.T) {
	c, ctx := startCluster(t)
	installHelmChartCRD(t, ctx, c.RestConfig)
	dyn := dynamic.NewForConfigOrDie(c.RestConfig)

	root := k3stest.ServerRoot(t)
	// No helm-controller here to wait for: the test plays it below.
	stdout, stderr, err := runCLI("install", "--root", root, "--kubeconfig", c.KubeconfigPath(), "--wait=false")
	if err != nil {
		t.Fatalf("install: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "metrics-server is not installed") {
		t.Errorf("install did not warn that metrics-server is missing:\n%s", stderr)
	}
	manifest := k3s.HostPaths(root).Manifest()
	if !strings.Contains(stdout, "Wrote "+manifest) {
		t.Fatalf("install output:\n%s", stdout)
	}

	// k3s's deploy controller applies the file; helm-controller adds its
	// finalizer and installs the release, whose scheduler and descheduler
	// take their leader-election Leases.
	applyManifest(t, ctx, dyn, manifest, helmControllerFinalizer)
	if err := installAsHelmController(ctx, c, manifest); err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"ballast-scheduler", "ballast-descheduler"} {
		if _, err := c.Client.CoordinationV1().Leases(charts.DefaultNamespace).Create(ctx,
			&coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: l}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	releasedFinalizer := make(chan bool, 1)
	go playHelmController(ctx, dyn, manifest, releasedFinalizer)

	stdout, stderr, err = runCLI("uninstall", "--root", root, "--kubeconfig", c.KubeconfigPath(), "--timeout", "1m")
	if err != nil {
		t.Fatalf("uninstall: %v\n%s", err, stderr)
	}
	select {
	case fileWasThere := <-releasedFinalizer:
		if !fileWasThere {
			t.Error("the manifest was removed before the HelmChart was deleted")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("helm-controller stand-in never saw the deletion")
	}
	if _, err := dyn.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace).Get(ctx, k3s.HelmChartName, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("HelmChart still in the API: %v", err)
	}
	if _, err := os.Stat(manifest); !os.IsNotExist(err) {
		t.Error("manifest file left behind")
	}
	if !strings.Contains(stdout, "k3s needs no restart") {
		t.Errorf("uninstall output:\n%s", stdout)
	}
	// Helm never made the Leases, so helm-controller's uninstall does not
	// remove them: ballast uninstall does.
	leases, err := c.Client.CoordinationV1().Leases(charts.DefaultNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range leases.Items {
		t.Errorf("lease %s/%s left after uninstall", l.Namespace, l.Name)
	}
}

// playHelmController waits for the HelmChart's deletion, checks the file is
// still there (the uninstall must not remove it first) and releases the finalizer.
func playHelmController(ctx context.Context, dyn dynamic.Interface, manifest string, done chan<- bool) {
	res := dyn.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace)
	for ctx.Err() == nil {
		u, err := res.Get(ctx, k3s.HelmChartName, metav1.GetOptions{})
		if err == nil && u.GetDeletionTimestamp() != nil {
			_, statErr := os.Stat(manifest)
			time.Sleep(500 * time.Millisecond) // the uninstall job takes a while
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			if _, err := res.Patch(ctx, k3s.HelmChartName, types.MergePatchType, patch, metav1.PatchOptions{}); err == nil {
				done <- statErr == nil
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func installHelmChartCRD(t *testing.T, ctx context.Context, cfg *rest.Config) {
	t.Helper()
	client := apiextensionsclient.NewForConfigOrDie(cfg)
	preserve := true
	crd := &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: "helmcharts.helm.cattle.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "helm.cattle.io",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "helmcharts", Singular: "helmchart", Kind: "HelmChart", ListKind: "HelmChartList"},
			Scope: apiextensionsv1.NamespaceScoped,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: &preserve,
				}},
			}},
		},
	}
	if _, err := client.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the HelmChart CRD to be established", 30*time.Second, func(ctx context.Context) (bool, error) {
		got, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range got.Status.Conditions {
			if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

func runCLI(args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = app.Run(log.New(&errOut), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), err
}
