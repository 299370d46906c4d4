package helminstall

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
)

// DryRunObject is one object of a release as the API server judged it in a
// server-side dry run.
type DryRunObject struct {
	Kind, Namespace, Name string
	// Exists is true when the cluster has the object: it would be updated.
	Exists bool
	// Err is the API server's refusal.
	Err error
	// NotChecked says why the object could not be sent: its namespace does
	// not exist yet, or the API server does not serve its kind.
	NotChecked string
}

// Ref names the object as kubectl does.
func (o DryRunObject) Ref() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// Objects decodes a rendered manifest (YAML documents) into its objects.
func Objects(manifest string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, doc := range strings.Split(manifest, "\n---") {
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

// ServerDryRun sends every object of objs to the API server as a
// server-side apply with dryRun=All: the server validates, defaults and
// admits each as it would for real, and stores nothing. An object whose
// namespace does not exist yet (the install creates it) or whose kind the
// server does not serve is reported, not sent.
func ServerDryRun(ctx context.Context, getter genericclioptions.RESTClientGetter, client kubernetes.Interface, dyn dynamic.Interface,
	namespace string, objs []*unstructured.Unstructured) ([]DryRunObject, error) {
	mapper, err := getter.ToRESTMapper()
	if err != nil {
		return nil, err
	}
	namespaces := map[string]bool{}
	nsExists := func(ns string) (bool, error) {
		if ok, seen := namespaces[ns]; seen {
			return ok, nil
		}
		_, err := client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("read namespace %s: %w", ns, err)
		}
		namespaces[ns] = err == nil
		return err == nil, nil
	}
	force := true
	var out []DryRunObject
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		o := DryRunObject{Kind: gvk.Kind, Name: u.GetName(), Namespace: u.GetNamespace()}
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if meta.IsNoMatchError(err) {
			o.NotChecked = "the API server does not serve " + gvk.GroupVersion().String() + " " + gvk.Kind
			out = append(out, o)
			continue
		}
		if err != nil {
			return out, err
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
			if o.Namespace == "" {
				o.Namespace = namespace
			}
			ok, err := nsExists(o.Namespace)
			if err != nil {
				return out, err
			}
			if !ok {
				o.NotChecked = "namespace " + o.Namespace + " does not exist yet (the install creates it)"
				out = append(out, o)
				continue
			}
			ri = dyn.Resource(mapping.Resource).Namespace(o.Namespace)
		} else {
			o.Namespace = ""
		}
		_, err = ri.Get(ctx, o.Name, metav1.GetOptions{})
		o.Exists = err == nil
		data, err := json.Marshal(u.Object)
		if err != nil {
			return out, err
		}
		_, o.Err = ri.Patch(ctx, o.Name, types.ApplyPatchType, data, metav1.PatchOptions{
			DryRun: []string{metav1.DryRunAll}, FieldManager: "ballast", Force: &force, FieldValidation: "Strict",
		})
		out = append(out, o)
	}
	return out, nil
}
