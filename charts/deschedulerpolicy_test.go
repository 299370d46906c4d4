package charts

import (
	"reflect"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
)

// surgePolicy returns the surge policy and its binding, or nils.
func surgePolicy(t *testing.T, objs []object) (*admissionregistrationv1.ValidatingAdmissionPolicy, *admissionregistrationv1.ValidatingAdmissionPolicyBinding) {
	t.Helper()
	p, pok := find(objs, "ValidatingAdmissionPolicy", "ballast-descheduler-surge")
	b, bok := find(objs, "ValidatingAdmissionPolicyBinding", "ballast-descheduler-surge")
	if pok != bok {
		t.Fatalf("policy rendered %t, binding %t: want both or neither", pok, bok)
	}
	if !pok {
		return nil, nil
	}
	return p.typed.(*admissionregistrationv1.ValidatingAdmissionPolicy), b.typed.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
}

// expressions returns every CEL expression of the policy, joined.
func expressions(p *admissionregistrationv1.ValidatingAdmissionPolicy) string {
	var all []string
	for _, c := range p.Spec.MatchConditions {
		all = append(all, c.Expression)
	}
	for _, v := range p.Spec.Variables {
		all = append(all, v.Expression)
	}
	for _, v := range p.Spec.Validations {
		all = append(all, v.Expression)
	}
	return strings.Join(all, "\n")
}

// TestSurgePolicy: with surgeSingleReplica, a policy narrows the
// descheduler's right to patch Deployments to its ServiceAccount changing
// the restart annotation in the namespaces it moves pods in; without, no
// policy. integration/descheduler holds it to that on a real API server.
func TestSurgePolicy(t *testing.T) {
	for _, values := range []string{"", "descheduler: {loadAwareBalance: {enabled: false, surgeSingleReplica: true}}"} {
		if p, _ := surgePolicy(t, render(t, valuesFromYAML(t, values))); p != nil {
			t.Errorf("values %q: a surge policy without surge moves", values)
		}
	}

	p, b := surgePolicy(t, render(t, valuesFromYAML(t, `descheduler: {loadAwareBalance: {surgeSingleReplica: true}}`)))
	if p == nil {
		t.Fatal("no surge policy with surgeSingleReplica")
	}
	if b.Spec.PolicyName != p.Name || !reflect.DeepEqual(b.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) ||
		b.Spec.MatchResources != nil {
		t.Errorf("binding %+v: want policy %s denied everywhere", b.Spec, p.Name)
	}
	if fp := p.Spec.FailurePolicy; fp == nil || *fp != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v: a policy that cannot be evaluated must refuse the patch", fp)
	}
	rules := p.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !reflect.DeepEqual(rules[0].APIGroups, []string{"apps"}) || !reflect.DeepEqual(rules[0].Resources, []string{"deployments"}) ||
		!reflect.DeepEqual(rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Update}) {
		t.Errorf("match constraints %+v: want updates of Deployments", rules)
	}
	if len(p.Spec.MatchConditions) != 1 || p.Spec.MatchConditions[0].Expression != `request.userInfo.username == "system:serviceaccount:ballast-system:ballast-descheduler"` {
		t.Errorf("match conditions %+v: want the descheduler's ServiceAccount", p.Spec.MatchConditions)
	}
	all := expressions(p)
	if !strings.Contains(all, `!(request.namespace in ["kube-system","ballast-system"])`) {
		t.Errorf("the policy does not keep the descheduler out of kube-system and Ballast's namespace:\n%s", all)
	}
	if !strings.Contains(all, "'ballast-sched.io/moved-at'") {
		t.Errorf("the policy does not name the restart annotation:\n%s", all)
	}
	// Every field a patch of a Deployment's spec and its pod template could
	// change is held: a field k8s.io/api adds fails here until it is.
	fields := func(v any) []string {
		var names []string
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
				names = append(names, name)
			}
		}
		return names
	}
	for _, f := range fields(appsv1.DeploymentSpec{}) {
		if f != "template" && !strings.Contains(all, "object.spec.?"+f+" == oldObject.spec.?"+f) {
			t.Errorf("the policy does not hold spec.%s", f)
		}
	}
	for _, f := range fields(corev1.PodTemplateSpec{}) {
		if f != "metadata" && !strings.Contains(all, "object.spec.template.?"+f+" == oldObject.spec.template.?"+f) {
			t.Errorf("the policy does not hold spec.template.%s", f)
		}
	}
	// Of the metadata, what a workload's controllers, garbage collector and
	// other tools act on.
	for _, f := range []string{"labels", "annotations", "ownerReferences", "finalizers"} {
		if !strings.Contains(all, "object.metadata.?"+f+" == oldObject.metadata.?"+f) {
			t.Errorf("the policy does not hold metadata.%s", f)
		}
	}
	for _, f := range []string{"labels", "finalizers"} {
		if !strings.Contains(all, "object.spec.template.metadata.?"+f+" == oldObject.spec.template.metadata.?"+f) {
			t.Errorf("the policy does not hold spec.template.metadata.%s", f)
		}
	}

	// Namespaces to move pods in, a ServiceAccount of the user's.
	p, _ = surgePolicy(t, render(t, valuesFromYAML(t, `
descheduler:
  loadAwareBalance: {surgeSingleReplica: true}
  namespaces: {include: [media, home]}
  serviceAccount: {create: false, name: mover}
`)))
	all = expressions(p)
	if !strings.Contains(all, `request.namespace in ["media","home"]`) {
		t.Errorf("the policy does not keep the descheduler to namespaces.include:\n%s", all)
	}
	if !strings.Contains(all, `"system:serviceaccount:ballast-system:mover"`) {
		t.Errorf("the policy does not name serviceAccount.name:\n%s", all)
	}
	p, _ = surgePolicy(t, render(t, valuesFromYAML(t, `descheduler: {loadAwareBalance: {surgeSingleReplica: true}, namespaces: {exclude: [backup]}}`)))
	if all = expressions(p); !strings.Contains(all, `!(request.namespace in ["kube-system","ballast-system","backup"])`) {
		t.Errorf("the policy does not keep the descheduler out of namespaces.exclude:\n%s", all)
	}
}

// TestMovesPolicy: the descheduler may create its moves ConfigMap again if
// it was deleted; create cannot be limited by name, so it is granted in
// Ballast's namespace only and a policy refuses any other name.
func TestMovesPolicy(t *testing.T) {
	objs := render(t, nil)
	role := mustFind(t, objs, "Role", "ballast-descheduler").typed.(*rbacv1.Role)
	creates := false
	for _, r := range role.Rules {
		if contains(r.Resources, "configmaps") && contains(r.Verbs, "create") {
			creates = true
			if len(r.Verbs) != 1 || len(r.Resources) != 1 {
				t.Errorf("rule %+v: want create on configmaps alone", r)
			}
		}
	}
	if !creates || role.Namespace != "ballast-system" {
		t.Errorf("Role %s/%s: want create on ConfigMaps in Ballast's namespace", role.Namespace, role.Name)
	}
	p := mustFind(t, objs, "ValidatingAdmissionPolicy", "ballast-descheduler-moves").typed.(*admissionregistrationv1.ValidatingAdmissionPolicy)
	b := mustFind(t, objs, "ValidatingAdmissionPolicyBinding", "ballast-descheduler-moves").typed.(*admissionregistrationv1.ValidatingAdmissionPolicyBinding)
	if b.Spec.PolicyName != p.Name || !reflect.DeepEqual(b.Spec.ValidationActions, []admissionregistrationv1.ValidationAction{admissionregistrationv1.Deny}) {
		t.Errorf("binding %+v: want policy %s denied everywhere", b.Spec, p.Name)
	}
	if fp := p.Spec.FailurePolicy; fp == nil || *fp != admissionregistrationv1.Fail {
		t.Errorf("failurePolicy %v: want Fail", fp)
	}
	rules := p.Spec.MatchConstraints.ResourceRules
	if len(rules) != 1 || !reflect.DeepEqual(rules[0].Resources, []string{"configmaps"}) ||
		!reflect.DeepEqual(rules[0].Operations, []admissionregistrationv1.OperationType{admissionregistrationv1.Create}) {
		t.Errorf("match constraints %+v: want creates of ConfigMaps", rules)
	}
	all := expressions(p)
	for _, want := range []string{`"system:serviceaccount:ballast-system:ballast-descheduler"`, `"ballast-system/ballast-descheduler-moves"`} {
		if !strings.Contains(all, want) {
			t.Errorf("the policy does not name %s:\n%s", want, all)
		}
	}
	// No RBAC from the chart, no right to guard.
	objs = render(t, valuesFromYAML(t, `descheduler: {rbac: {create: false}}`))
	if _, found := find(objs, "ValidatingAdmissionPolicy", "ballast-descheduler-moves"); found {
		t.Error("a moves policy without the chart's Role")
	}
}
