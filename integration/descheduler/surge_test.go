package integration

import (
	"context"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"

	"github.com/ballast-sched/ballast/core/objects"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

const surgePolicy = "ballast-descheduler-surge"

// TestSurgePolicy: with surgeSingleReplica the chart lets the descheduler
// patch Deployments, and its admission policy lets it change nothing but the
// restart annotation a surge move sets (balance.Surge), in the namespaces it
// moves pods in. RBAC alone grants every patch of every Deployment.
func TestSurgePolicy(t *testing.T) {
	c, ctx := startCluster(t)
	installDescheduler(t, ctx, c, map[string]any{"descheduler": map[string]any{"loadAwareBalance": map[string]any{"surgeSingleReplica": true}}})
	sa := descheduler(t, c)
	createNamespace(t, ctx, c.Client, "apps")
	deploy := func(ns, name string) *appsv1.Deployment {
		d, err := c.Client.AppsV1().Deployments(ns).Create(ctx, objects.MakeDeployment(name).Namespace(ns).Replicas(1).Obj(), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	deploy("apps", "web")
	deploy("apps", "probe")
	deploy("kube-system", "dns")
	patch := func(client kubernetes.Interface, ns, name, data string) error {
		_, err := client.AppsV1().Deployments(ns).Patch(ctx, name, types.StrategicMergePatchType, []byte(data), metav1.PatchOptions{})
		return err
	}

	// The policy applies once the API server has seen it and its binding;
	// until then each patch changes the probe.
	waitFor(t, ctx, "the descheduler's patch of a Deployment's replicas to be refused by "+surgePolicy, time.Minute, func(context.Context) (bool, error) {
		err := patch(sa, "apps", "probe", `{"spec":{"minReadySeconds":`+strconv.Itoa(int(time.Now().UnixNano()%500)+1)+`}}`)
		return refusedByPolicy(err, surgePolicy), err
	})

	// A surge move: allowed, twice (the annotation changes). The Deployment
	// controller writes the Deployment meanwhile: a patch over a version
	// read before is a conflict, as in the descheduler.
	for i, at := range []time.Time{time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC), time.Date(2026, 12, 2, 12, 5, 0, 0, time.UTC)} {
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			d, err := c.Client.AppsV1().Deployments("apps").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return err
			}
			return balance.Surge(ctx, sa, d, at)
		})
		if err != nil {
			t.Fatalf("surge move %d refused: %v", i+1, err)
		}
	}
	web, err := c.Client.AppsV1().Deployments("apps").Get(ctx, "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := web.Spec.Template.Annotations[balance.SurgeAnnotation]; got != "2026-12-02T12:05:00Z" {
		t.Errorf("%s = %q after the surge moves", balance.SurgeAnnotation, got)
	}

	owner, err := c.Client.CoreV1().ConfigMaps("apps").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	container := web.Spec.Template.Spec.Containers[0].Name
	for _, tc := range []struct{ name, patch string }{
		{"replicas", `{"spec":{"replicas":3}}`},
		{"image", `{"spec":{"template":{"spec":{"containers":[{"name":"` + container + `","image":"registry.example/other"}]}}}}`},
		{"the restart annotation and an image", `{"spec":{"template":{"metadata":{"annotations":{"ballast-sched.io/moved-at":"2026-12-02T13:00:00Z"}},` +
			`"spec":{"containers":[{"name":"` + container + `","image":"registry.example/other"}]}}}}`},
		{"another pod-template annotation", `{"spec":{"template":{"metadata":{"annotations":{"sidecar.istio.io/inject":"true"}}}}}`},
		{"a pod-template label", `{"spec":{"template":{"metadata":{"labels":{"tier":"other"}}}}}`},
		{"a pod-template finalizer", `{"spec":{"template":{"metadata":{"finalizers":["example.com/hold"]}}}}`},
		{"paused", `{"spec":{"paused":true}}`},
		{"strategy", `{"spec":{"strategy":{"type":"Recreate","rollingUpdate":null}}}`},
		{"minReadySeconds", `{"spec":{"minReadySeconds":30}}`},
		{"revisionHistoryLimit", `{"spec":{"revisionHistoryLimit":1}}`},
		{"progressDeadlineSeconds", `{"spec":{"progressDeadlineSeconds":60}}`},
		{"a label", `{"metadata":{"labels":{"tier":"other"}}}`},
		{"an annotation", `{"metadata":{"annotations":{"example.com/policy":"all"}}}`},
		{"an owner", `{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"` + string(owner.UID) + `"}]}}`},
		{"a finalizer", `{"metadata":{"finalizers":["example.com/hold"]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := patch(sa, "apps", "web", tc.patch); !refusedByPolicy(err, surgePolicy) {
				t.Errorf("descheduler's patch: %v, want a refusal by %s", err, surgePolicy)
			}
		})
	}

	// Not in the namespaces it moves pods in.
	err = retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		d, err := c.Client.AppsV1().Deployments("kube-system").Get(ctx, "dns", metav1.GetOptions{})
		if err != nil {
			return err
		}
		return balance.Surge(ctx, sa, d, time.Now())
	})
	if !refusedByPolicy(err, surgePolicy) {
		t.Errorf("surge move in kube-system: %v, want a refusal by %s", err, surgePolicy)
	}
	// Nor a Deployment created by a server-side apply (a patch that creates).
	apply := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"new"},"spec":{"selector":{"matchLabels":{"app":"new"}},` +
		`"template":{"metadata":{"labels":{"app":"new"}},"spec":{"containers":[{"name":"c","image":"registry.example/new"}]}}}}`
	_, err = sa.AppsV1().Deployments("apps").Patch(ctx, "new", types.ApplyPatchType, []byte(apply), metav1.PatchOptions{FieldManager: "test"})
	if !apierrors.IsForbidden(err) {
		t.Errorf("descheduler's apply creating a Deployment: %v, want Forbidden", err)
	}
	// Nobody else is held by it.
	if err := patch(c.Client, "apps", "web", `{"spec":{"replicas":2}}`); err != nil {
		t.Errorf("admin's patch: %v", err)
	}
}
