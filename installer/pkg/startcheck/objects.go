package startcheck

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// object is one object of a rendered manifest: typed when the kind is one
// the chart renders and the API server's rules are checked for, its
// metadata alone otherwise.
type object struct {
	kind string
	meta *metav1.ObjectMeta
	// typed is *appsv1.Deployment, *corev1.Service, … or nil.
	typed any
	// raw is the document as rendered.
	raw []byte
	// decodeErr is why the document does not decode into its kind's type.
	decodeErr error
}

func (o object) ref() string { return o.kind + "/" + o.meta.Name }

// kinds are the kinds decoded strictly, each into its type: a field the
// type does not have is refused, as the API server's strict field
// validation refuses it (by default it drops the field with a warning, so
// what the values asked for silently does not happen).
var kinds = map[string]func() any{
	"Deployment":          func() any { return &appsv1.Deployment{} },
	"Service":             func() any { return &corev1.Service{} },
	"ConfigMap":           func() any { return &corev1.ConfigMap{} },
	"ServiceAccount":      func() any { return &corev1.ServiceAccount{} },
	"Secret":              func() any { return &corev1.Secret{} },
	"PodDisruptionBudget": func() any { return &policyv1.PodDisruptionBudget{} },
	"ClusterRole":         func() any { return &rbacv1.ClusterRole{} },
	"ClusterRoleBinding":  func() any { return &rbacv1.ClusterRoleBinding{} },
	"Role":                func() any { return &rbacv1.Role{} },
	"RoleBinding":         func() any { return &rbacv1.RoleBinding{} },
	"NetworkPolicy":       func() any { return &networkingv1.NetworkPolicy{} },
}

// objects decodes a rendered manifest. A document that does not decode
// into its kind's type keeps the error, and its metadata alone.
func objects(manifest string) ([]object, error) {
	var out []object
	dec := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(manifest)))
	for {
		doc, err := dec.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("reading the rendered manifests: %w", err)
		}
		var head struct {
			metav1.TypeMeta   `json:",inline"`
			metav1.ObjectMeta `json:"metadata"`
		}
		if err := yaml.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("reading the rendered manifests: %w", err)
		}
		if head.Kind == "" {
			continue // an empty document
		}
		o := object{kind: head.Kind, meta: &head.ObjectMeta, raw: doc}
		if newObj, ok := kinds[head.Kind]; ok {
			typed := newObj()
			if err := yaml.UnmarshalStrict(doc, typed); err != nil {
				o.decodeErr = err
			} else {
				o.typed = typed
				o.meta = metaOf(typed)
			}
		}
		out = append(out, o)
	}
}

func metaOf(typed any) *metav1.ObjectMeta {
	if m, ok := typed.(metav1.ObjectMetaAccessor); ok {
		if om, ok := m.GetObjectMeta().(*metav1.ObjectMeta); ok {
			return om
		}
	}
	return &metav1.ObjectMeta{}
}

// apiRefusals returns what the API server (or, for a pod template, the
// controller that creates its pods and the kubelet that pulls its images)
// would refuse in the rendered objects, one Refusal per object.
func apiRefusals(objs []object) []Refusal {
	var out []Refusal
	for _, o := range objs {
		if o.decodeErr != nil {
			out = append(out, Refusal{Component: apiServer, Workload: o.ref(), Err: o.decodeErr})
			continue
		}
		if errs := validateObject(o); len(errs) > 0 {
			// In one order, whatever the order of the maps walked: a
			// refusal is traced to the values keys by its words.
			sort.SliceStable(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
			out = append(out, Refusal{Component: apiServer, Workload: o.ref(), Err: errs.ToAggregate()})
		}
	}
	return out
}

// validateObject checks o as the API server's validation of its kind does,
// for the fields a chart's values reach.
func validateObject(o object) field.ErrorList {
	switch t := o.typed.(type) {
	case *appsv1.Deployment:
		return validateDeployment(t)
	case *corev1.Service:
		return validateService(t)
	case *corev1.ConfigMap:
		return validateConfigMap(t)
	case *corev1.ServiceAccount:
		return validateMeta(&t.ObjectMeta, true, nameIsDNSSubdomain)
	case *corev1.Secret:
		return validateMeta(&t.ObjectMeta, true, nameIsDNSSubdomain)
	case *policyv1.PodDisruptionBudget:
		return validatePodDisruptionBudget(t)
	case *rbacv1.ClusterRole:
		return append(validateMeta(&t.ObjectMeta, false, nameIsPathSegment), validatePolicyRules(t.Rules, field.NewPath("rules"))...)
	case *rbacv1.Role:
		return append(validateMeta(&t.ObjectMeta, true, nameIsPathSegment), validatePolicyRules(t.Rules, field.NewPath("rules"))...)
	case *rbacv1.ClusterRoleBinding:
		return validateRoleBinding(&t.ObjectMeta, false, t.RoleRef, t.Subjects)
	case *rbacv1.RoleBinding:
		return validateRoleBinding(&t.ObjectMeta, true, t.RoleRef, t.Subjects)
	case *networkingv1.NetworkPolicy:
		return validateNetworkPolicy(t)
	}
	// A kind only its own API server knows (ServiceMonitor,
	// MutatingAdmissionPolicy): its metadata.
	return validateMeta(o.meta, o.meta.Namespace != "", nameIsDNSSubdomain)
}
