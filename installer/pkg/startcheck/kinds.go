package startcheck

import (
	"fmt"
	"net/netip"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	nameIsDNSSubdomain = apivalidation.NameIsDNSSubdomain
	nameIsDNS1035Label = apivalidation.NameIsDNS1035Label
)

// nameIsPathSegment is RBAC's rule for names: anything that can be a path
// segment.
func nameIsPathSegment(name string, _ bool) []string {
	switch {
	case name == "." || name == "..":
		return []string{fmt.Sprintf("may not be '%s'", name)}
	case strings.ContainsAny(name, "/%"):
		return []string{"may not contain '/' or '%'"}
	}
	return nil
}

// validateMeta is the API server's ValidateObjectMeta. A namespaced object
// without a namespace gets the release's at install.
func validateMeta(m *metav1.ObjectMeta, namespaced bool, nameFn apivalidation.ValidateNameFunc) field.ErrorList {
	if namespaced && m.Namespace == "" {
		c := *m
		c.Namespace = "default"
		m = &c
	}
	return apivalidation.ValidateObjectMeta(m, namespaced, nameFn, field.NewPath("metadata"))
}

func validateDeployment(d *appsv1.Deployment) field.ErrorList {
	errs := validateMeta(&d.ObjectMeta, true, nameIsDNSSubdomain)
	sp := field.NewPath("spec")
	if d.Spec.Replicas != nil && *d.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(sp.Child("replicas"), *d.Spec.Replicas, "must be greater than or equal to 0"))
	}
	if d.Spec.Selector == nil {
		errs = append(errs, field.Required(sp.Child("selector"), ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(d.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, sp.Child("selector"))...)
		if len(d.Spec.Selector.MatchLabels)+len(d.Spec.Selector.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(sp.Child("selector"), d.Spec.Selector, "empty selector is invalid for deployment"))
		}
	}
	if sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector); err == nil && !sel.Empty() && !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
		errs = append(errs, field.Invalid(sp.Child("template", "metadata", "labels"), d.Spec.Template.Labels, "`selector` does not match template `labels`"))
	}
	if s := d.Spec.Strategy; s.Type != "" && s.Type != appsv1.RollingUpdateDeploymentStrategyType && s.Type != appsv1.RecreateDeploymentStrategyType {
		errs = append(errs, field.NotSupported(sp.Child("strategy", "type"), s.Type,
			[]appsv1.DeploymentStrategyType{appsv1.RollingUpdateDeploymentStrategyType, appsv1.RecreateDeploymentStrategyType}))
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru != nil {
		rp := sp.Child("strategy", "rollingUpdate")
		errs = append(errs, validateIntOrPercent(ru.MaxUnavailable, rp.Child("maxUnavailable"))...)
		errs = append(errs, validateIntOrPercent(ru.MaxSurge, rp.Child("maxSurge"))...)
		if isZero(ru.MaxUnavailable) && isZero(ru.MaxSurge) {
			errs = append(errs, field.Invalid(rp.Child("maxUnavailable"), ru.MaxUnavailable, "may not be 0 when `maxSurge` is 0"))
		}
	}
	return append(errs, validatePodTemplate(&d.Spec.Template, sp.Child("template"))...)
}

func isZero(v *intstr.IntOrString) bool {
	return v == nil || (v.Type == intstr.Int && v.IntVal == 0) || (v.Type == intstr.String && strings.TrimSuffix(v.StrVal, "%") == "0")
}

func validateIntOrPercent(v *intstr.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	switch v.Type {
	case intstr.Int:
		if v.IntVal < 0 {
			return field.ErrorList{field.Invalid(p, v.IntVal, "must be greater than or equal to 0")}
		}
	case intstr.String:
		var errs field.ErrorList
		for _, msg := range validation.IsValidPercent(v.StrVal) {
			errs = append(errs, field.Invalid(p, v.StrVal, msg))
		}
		return errs
	}
	return nil
}

func validateService(s *corev1.Service) field.ErrorList {
	errs := validateMeta(&s.ObjectMeta, true, nameIsDNS1035Label)
	sp := field.NewPath("spec")
	types := []corev1.ServiceType{corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer, corev1.ServiceTypeExternalName}
	if s.Spec.Type != "" && !sets.New(types...).Has(s.Spec.Type) {
		errs = append(errs, field.NotSupported(sp.Child("type"), s.Spec.Type, types))
	}
	if len(s.Spec.Ports) == 0 && s.Spec.ClusterIP != corev1.ClusterIPNone && s.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(sp.Child("ports"), ""))
	}
	names := sets.New[string]()
	for i, port := range s.Spec.Ports {
		pp := sp.Child("ports").Index(i)
		if len(s.Spec.Ports) > 1 && port.Name == "" {
			errs = append(errs, field.Required(pp.Child("name"), ""))
		}
		if port.Name != "" {
			for _, msg := range validation.IsDNS1123Label(port.Name) {
				errs = append(errs, field.Invalid(pp.Child("name"), port.Name, msg))
			}
			if names.Has(port.Name) {
				errs = append(errs, field.Duplicate(pp.Child("name"), port.Name))
			}
			names.Insert(port.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(port.Port)) {
			errs = append(errs, field.Invalid(pp.Child("port"), port.Port, msg))
		}
		errs = append(errs, validateProtocol(port.Protocol, pp.Child("protocol"))...)
		errs = append(errs, validatePortNumOrName(port.TargetPort, pp.Child("targetPort"))...)
	}
	return append(errs, metav1validation.ValidateLabels(s.Spec.Selector, sp.Child("selector"))...)
}

func validatePortNumOrName(port intstr.IntOrString, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if port.Type == intstr.String {
		for _, msg := range validation.IsValidPortName(port.StrVal) {
			errs = append(errs, field.Invalid(p, port.StrVal, msg))
		}
		return errs
	}
	if port.IntVal == 0 {
		return nil // the Service's port, by default
	}
	for _, msg := range validation.IsValidPortNum(int(port.IntVal)) {
		errs = append(errs, field.Invalid(p, port.IntVal, msg))
	}
	return errs
}

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	errs := validateMeta(&cm.ObjectMeta, true, nameIsDNSSubdomain)
	size := 0
	for k, v := range cm.Data {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("data").Key(k), k, msg))
		}
		size += len(k) + len(v)
	}
	for k, v := range cm.BinaryData {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, msg))
		}
		size += len(k) + len(v)
	}
	if size > corev1.MaxSecretSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", corev1.MaxSecretSize))
	}
	return errs
}

func validatePodDisruptionBudget(pdb *policyv1.PodDisruptionBudget) field.ErrorList {
	errs := validateMeta(&pdb.ObjectMeta, true, nameIsDNSSubdomain)
	sp := field.NewPath("spec")
	if pdb.Spec.MinAvailable != nil && pdb.Spec.MaxUnavailable != nil {
		errs = append(errs, field.Invalid(sp, pdb.Spec, "minAvailable and maxUnavailable cannot be both set"))
	}
	errs = append(errs, validateIntOrPercent(pdb.Spec.MinAvailable, sp.Child("minAvailable"))...)
	errs = append(errs, validateIntOrPercent(pdb.Spec.MaxUnavailable, sp.Child("maxUnavailable"))...)
	return append(errs, metav1validation.ValidateLabelSelector(pdb.Spec.Selector, metav1validation.LabelSelectorValidationOptions{}, sp.Child("selector"))...)
}

func validatePolicyRules(rules []rbacv1.PolicyRule, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		rp := p.Index(i)
		if len(r.Verbs) == 0 {
			errs = append(errs, field.Required(rp.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(r.NonResourceURLs) > 0 && (len(r.APIGroups) > 0 || len(r.Resources) > 0) {
			errs = append(errs, field.Invalid(rp.Child("nonResourceURLs"), r.NonResourceURLs, "rules cannot apply to both regular resources and non-resource URLs"))
		}
		if len(r.NonResourceURLs) == 0 && len(r.APIGroups) == 0 {
			errs = append(errs, field.Required(rp.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(r.NonResourceURLs) == 0 && len(r.Resources) == 0 {
			errs = append(errs, field.Required(rp.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

func validateRoleBinding(m *metav1.ObjectMeta, namespaced bool, ref rbacv1.RoleRef, subjects []rbacv1.Subject) field.ErrorList {
	errs := validateMeta(m, namespaced, nameIsPathSegment)
	rp := field.NewPath("roleRef")
	if ref.APIGroup != rbacv1.GroupName {
		errs = append(errs, field.NotSupported(rp.Child("apiGroup"), ref.APIGroup, []string{rbacv1.GroupName}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = append(kinds, "Role")
	}
	if !sets.New(kinds...).Has(ref.Kind) {
		errs = append(errs, field.NotSupported(rp.Child("kind"), ref.Kind, kinds))
	}
	if ref.Name == "" {
		errs = append(errs, field.Required(rp.Child("name"), ""))
	}
	for i, s := range subjects {
		sp := field.NewPath("subjects").Index(i)
		if s.Name == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		}
		switch s.Kind {
		case rbacv1.ServiceAccountKind:
			for _, msg := range validation.IsDNS1123Subdomain(s.Name) {
				errs = append(errs, field.Invalid(sp.Child("name"), s.Name, msg))
			}
			if s.APIGroup != "" {
				errs = append(errs, field.NotSupported(sp.Child("apiGroup"), s.APIGroup, []string{""}))
			}
			if !namespaced && s.Namespace == "" {
				errs = append(errs, field.Required(sp.Child("namespace"), ""))
			}
		case rbacv1.UserKind, rbacv1.GroupKind:
			if s.APIGroup != rbacv1.GroupName {
				errs = append(errs, field.NotSupported(sp.Child("apiGroup"), s.APIGroup, []string{rbacv1.GroupName}))
			}
		default:
			errs = append(errs, field.NotSupported(sp.Child("kind"), s.Kind, []string{rbacv1.ServiceAccountKind, rbacv1.UserKind, rbacv1.GroupKind}))
		}
	}
	return errs
}

func validateNetworkPolicy(np *networkingv1.NetworkPolicy) field.ErrorList {
	errs := validateMeta(&np.ObjectMeta, true, nameIsDNSSubdomain)
	sp := field.NewPath("spec")
	opts := metav1validation.LabelSelectorValidationOptions{}
	errs = append(errs, metav1validation.ValidateLabelSelector(&np.Spec.PodSelector, opts, sp.Child("podSelector"))...)
	for i, t := range np.Spec.PolicyTypes {
		if t != networkingv1.PolicyTypeIngress && t != networkingv1.PolicyTypeEgress {
			errs = append(errs, field.NotSupported(sp.Child("policyTypes").Index(i), t, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}))
		}
	}
	for i, rule := range np.Spec.Ingress {
		rp := sp.Child("ingress").Index(i)
		for j, port := range rule.Ports {
			pp := rp.Child("ports").Index(j)
			if port.Protocol != nil {
				errs = append(errs, validateProtocol(*port.Protocol, pp.Child("protocol"))...)
			}
			if port.Port != nil {
				errs = append(errs, validatePortNumOrName(*port.Port, pp.Child("port"))...)
				if port.EndPort != nil && (port.Port.Type != intstr.Int || *port.EndPort < port.Port.IntVal) {
					errs = append(errs, field.Invalid(pp.Child("endPort"), *port.EndPort, "must be greater than or equal to `port`, a number"))
				}
			}
		}
		for j, peer := range rule.From {
			pp := rp.Child("from").Index(j)
			selectors := peer.PodSelector != nil || peer.NamespaceSelector != nil
			switch {
			case selectors && peer.IPBlock != nil:
				errs = append(errs, field.Forbidden(pp, "may not specify both ipBlock and another peer"))
			case !selectors && peer.IPBlock == nil:
				errs = append(errs, field.Required(pp, "must specify a peer"))
			}
			errs = append(errs, metav1validation.ValidateLabelSelector(peer.PodSelector, opts, pp.Child("podSelector"))...)
			errs = append(errs, metav1validation.ValidateLabelSelector(peer.NamespaceSelector, opts, pp.Child("namespaceSelector"))...)
			if b := peer.IPBlock; b != nil {
				errs = append(errs, validateIPBlock(b, pp.Child("ipBlock"))...)
			}
		}
	}
	return errs
}

func validateIPBlock(b *networkingv1.IPBlock, p *field.Path) field.ErrorList {
	cidr, err := netip.ParsePrefix(b.CIDR)
	if err != nil {
		return field.ErrorList{field.Invalid(p.Child("cidr"), b.CIDR, "must be a valid CIDR (e.g. 10.0.0.0/8)")}
	}
	cidr = cidr.Masked()
	var errs field.ErrorList
	for i, e := range b.Except {
		ex, err := netip.ParsePrefix(e)
		if err != nil {
			errs = append(errs, field.Invalid(p.Child("except").Index(i), e, "must be a valid CIDR"))
			continue
		}
		if !cidr.Contains(ex.Masked().Addr()) || ex.Bits() <= cidr.Bits() {
			errs = append(errs, field.Invalid(p.Child("except").Index(i), e, "must be a strict subset of `cidr`"))
		}
	}
	return errs
}
