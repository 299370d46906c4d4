// Package dryrun has a reachable API server judge a release's objects as it
// would judge them for real, storing nothing: each object goes as a
// server-side apply with dryRun=All (validation, defaulting, admission,
// strict field validation), and each Deployment's pod template as the Pod
// its ReplicaSet would create (the admission of pods: Pod Security, priority
// classes, quotas, limit ranges). `ballast render --validate` calls it, and
// so does `ballast install --dry-run`.
package dryrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/core/cli/kube"
)

// FieldManager is the field manager of the dry-run applies.
const FieldManager = "ballast"

// Verdict is what the API server made of one object.
type Verdict struct {
	Kind, Namespace, Name string
	// Exists is true when the cluster has the object: it would be updated.
	Exists bool
	// Err is the API server's refusal.
	Err error
	// NotChecked says why the object was not sent: its namespace does not
	// exist yet.
	NotChecked string
	// PodOf names the Deployment when this is the pod its ReplicaSet would
	// create, sent on its own.
	PodOf string
}

// Ref names the object as kubectl does.
func (v Verdict) Ref() string {
	if v.Namespace == "" {
		return v.Kind + " " + v.Name
	}
	return v.Kind + " " + v.Namespace + "/" + v.Name
}

// Objects decodes a rendered manifest into its objects.
func Objects(manifest string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split("\n"+manifest, "\n---") {
		obj := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			return nil, fmt.Errorf("decode a rendered object: %w", err)
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
	return out, nil
}

// Manifest has the cluster getter reaches judge every object of a rendered
// manifest (Cluster.Judge); objects without a namespace that need one go
// to namespace.
func Manifest(ctx context.Context, getter genericclioptions.RESTClientGetter, namespace, manifest string) ([]Verdict, error) {
	objs, err := Objects(manifest)
	if err != nil {
		return nil, err
	}
	if _, err := kube.NewClients(getter); err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err) // with what to do
	}
	cfg, err := getter.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	// Two or three requests an object, in a row: client-go's default of
	// 5 a second would make a release's dry run take ten seconds.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 100
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, fmt.Errorf("connect to the cluster: %w", err)
	}
	return Cluster{Mapper: mapper, Client: client, Dynamic: dyn}.Judge(ctx, namespace, objs)
}

// Cluster is what a dry run talks to.
type Cluster struct {
	Mapper  meta.RESTMapper
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
}

// Judge sends every object of objs to the API server as a dry run; an
// object without a namespace that needs one goes to namespace. The error
// is one that stopped the dry run itself (the cluster could not be read).
func (c Cluster) Judge(ctx context.Context, namespace string, objs []*unstructured.Unstructured) ([]Verdict, error) {
	j := judge{Cluster: c, namespaces: map[string]bool{}}
	var out []Verdict
	for _, u := range objs {
		v, err := j.object(ctx, namespace, u)
		if err != nil {
			return out, err
		}
		out = append(out, v)
		if u.GetKind() == "Deployment" && v.Err == nil && v.NotChecked == "" {
			pv, err := j.pod(ctx, v.Namespace, u)
			if err != nil {
				return out, err
			}
			out = append(out, pv)
		}
	}
	return out, nil
}

type judge struct {
	Cluster
	namespaces map[string]bool
}

func (j judge) namespaceExists(ctx context.Context, ns string) (bool, error) {
	if ok, seen := j.namespaces[ns]; seen {
		return ok, nil
	}
	_, err := j.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("read namespace %s: %w", ns, err)
	}
	j.namespaces[ns] = err == nil
	return err == nil, nil
}

func (j judge) object(ctx context.Context, namespace string, u *unstructured.Unstructured) (Verdict, error) {
	gvk := u.GroupVersionKind()
	v := Verdict{Kind: gvk.Kind, Name: u.GetName(), Namespace: u.GetNamespace()}
	mapping, err := j.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		v.Err = fmt.Errorf("the API server does not serve %s %s", gvk.GroupVersion(), gvk.Kind)
		return v, nil
	}
	if err != nil {
		return v, err
	}
	ri := dynamic.ResourceInterface(j.Dynamic.Resource(mapping.Resource))
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if v.Namespace == "" {
			v.Namespace = namespace
		}
		ok, err := j.namespaceExists(ctx, v.Namespace)
		if err != nil {
			return v, err
		}
		if !ok {
			v.NotChecked = "namespace " + v.Namespace + " does not exist yet"
			return v, nil
		}
		ri = j.Dynamic.Resource(mapping.Resource).Namespace(v.Namespace)
	} else {
		v.Namespace = ""
	}
	_, err = ri.Get(ctx, v.Name, metav1.GetOptions{})
	v.Exists = err == nil
	data, err := json.Marshal(u.Object)
	if err != nil {
		return v, err
	}
	force := true
	_, v.Err = ri.Patch(ctx, v.Name, types.ApplyPatchType, data, metav1.PatchOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: FieldManager, Force: &force, FieldValidation: "Strict",
	})
	return v, nil
}

// pod sends the pod a Deployment's ReplicaSet would create as a dry-run
// create: what admission does to pods (Pod Security, priority classes,
// quotas, limit ranges) does not show on the Deployment. The ServiceAccount
// admission refuses a pod whose ServiceAccount does not exist; one the
// release creates is not there yet on a first install, so such a pod is
// sent as the namespace's default ServiceAccount's.
func (j judge) pod(ctx context.Context, namespace string, u *unstructured.Unstructured) (Verdict, error) {
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, d); err != nil {
		return Verdict{}, fmt.Errorf("Deployment/%s: %w", u.GetName(), err)
	}
	t := d.Spec.Template
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: d.Name + "-", Namespace: namespace, Labels: t.Labels, Annotations: t.Annotations},
		Spec:       t.Spec,
	}
	v := Verdict{Kind: "Pod", Namespace: namespace, Name: d.Name + "-…", PodOf: d.Name}
	if sa := p.Spec.ServiceAccountName; sa != "" && sa != "default" {
		_, err := j.Client.CoreV1().ServiceAccounts(namespace).Get(ctx, sa, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			p.Spec.ServiceAccountName = ""
			p.Spec.DeprecatedServiceAccount = ""
		case err != nil:
			return v, fmt.Errorf("read ServiceAccount %s/%s: %w", namespace, sa, err)
		}
	}
	_, v.Err = j.Client.CoreV1().Pods(namespace).Create(ctx, p, metav1.CreateOptions{
		DryRun: []string{metav1.DryRunAll}, FieldManager: FieldManager, FieldValidation: "Strict",
	})
	return v, nil
}

// Refused returns every refusal of verdicts as one error, or nil.
func Refused(verdicts []Verdict) error {
	var errs []error
	for _, v := range verdicts {
		if v.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", v.Ref(), v.Err))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("the API server refuses %d of the release's objects: %w", len(errs), errors.Join(errs...))
}

// Write tells, object by object, what the API server would create, update
// and refuse, then the counts, and what was not sent and why.
func Write(w io.Writer, verdicts []Verdict) {
	var created, updated, refused, pods int
	notChecked := map[string]int{}
	var order []string
	for _, v := range verdicts {
		switch {
		case v.Err != nil:
			refused++
			fmt.Fprintf(w, "  refused   %s: %v\n", v.Ref(), v.Err)
		case v.PodOf != "":
			pods++
		case v.NotChecked != "":
			if notChecked[v.NotChecked] == 0 {
				order = append(order, v.NotChecked)
			}
			notChecked[v.NotChecked]++
		case v.Exists:
			updated++
			fmt.Fprintf(w, "  update    %s\n", v.Ref())
		default:
			created++
			fmt.Fprintf(w, "  create    %s\n", v.Ref())
		}
	}
	fmt.Fprintf(w, "Server-side dry run: the API server accepts %d objects (%d to create, %d to update)", created+updated, created, updated)
	if pods > 0 {
		fmt.Fprintf(w, ", and the pods of %d Deployments", pods)
	}
	if refused > 0 {
		fmt.Fprintf(w, "; it refuses %d", refused)
	}
	fmt.Fprintln(w, ".")
	for _, why := range order {
		fmt.Fprintf(w, "Not sent, checked offline only: %d objects: %s.\n", notChecked[why], why)
	}
}
