package charts

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestOptInPolicy(t *testing.T) {
	objs := render(t, nil)
	policy := mustFind(t, objs, "MutatingAdmissionPolicy", "ballast-opt-in")
	binding := mustFind(t, objs, "MutatingAdmissionPolicyBinding", "ballast-opt-in")
	if got := policy.raw["apiVersion"]; got != "admissionregistration.k8s.io/v1" {
		t.Errorf("policy apiVersion = %v, want the GA admissionregistration.k8s.io/v1", got)
	}
	spec := policy.raw["spec"].(map[string]any)
	if spec["failurePolicy"] != "Ignore" {
		t.Errorf("failurePolicy = %v: a policy error must never block a pod", spec["failurePolicy"])
	}
	mutation := spec["mutations"].([]any)[0].(map[string]any)
	expr := mutation["applyConfiguration"].(map[string]any)["expression"].(string)
	if !strings.Contains(expr, `schedulerName: "ballast-scheduler"`) {
		t.Errorf("mutation does not set Ballast's scheduler: %s", expr)
	}
	bspec := binding.raw["spec"].(map[string]any)
	if bspec["policyName"] != "ballast-opt-in" {
		t.Errorf("binding names policy %v", bspec["policyName"])
	}
	sel := bspec["matchResources"].(map[string]any)["namespaceSelector"].(map[string]any)
	if diff := cmp.Diff(map[string]any{"ballast-sched.io/opt-in": "true"}, sel["matchLabels"]); diff != "" {
		t.Errorf("namespace selector labels (-want,+got):\n%s", diff)
	}
	wantExcluded := map[string]any{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": []any{"kube-system", "ballast-system"}}
	if diff := cmp.Diff([]any{wantExcluded}, sel["matchExpressions"]); diff != "" {
		t.Errorf("namespace selector expressions (-want,+got):\n%s", diff)
	}

	// A custom profile name, extra selectors: the exclusions stay.
	objs = render(t, valuesFromYAML(t, `
scheduler: {schedulerName: balanced}
descheduler: {schedulerNames: [balanced]}
optIn:
  namespaceSelector:
    matchExpressions: [{key: team, operator: In, values: [media]}]
  objectSelector: {matchLabels: {tier: batch}}
`))
	policy = mustFind(t, objs, "MutatingAdmissionPolicy", "ballast-opt-in")
	expr = policy.raw["spec"].(map[string]any)["mutations"].([]any)[0].(map[string]any)["applyConfiguration"].(map[string]any)["expression"].(string)
	if !strings.Contains(expr, `schedulerName: "balanced"`) {
		t.Errorf("mutation ignores scheduler.schedulerName: %s", expr)
	}
	mr := mustFind(t, objs, "MutatingAdmissionPolicyBinding", "ballast-opt-in").raw["spec"].(map[string]any)["matchResources"].(map[string]any)
	exprs := mr["namespaceSelector"].(map[string]any)["matchExpressions"].([]any)
	if len(exprs) != 2 || exprs[1].(map[string]any)["operator"] != "NotIn" {
		t.Errorf("user expressions must be joined by the exclusions: %v", exprs)
	}
	if diff := cmp.Diff(map[string]any{"matchLabels": map[string]any{"tier": "batch"}}, mr["objectSelector"]); diff != "" {
		t.Errorf("object selector (-want,+got):\n%s", diff)
	}
}

func TestOptInPolicyOnlyWhereItMeansSomething(t *testing.T) {
	for _, tc := range []struct {
		name        string
		values      string
		apiVersions []string
		wantAPI     string
		wantNotes   string
	}{
		{name: "second mode on 1.36", wantAPI: "admissionregistration.k8s.io/v1", wantNotes: "kubectl label namespace"},
		{name: "beta API only (1.34-1.35 with the gate)", apiVersions: []string{"admissionregistration.k8s.io/v1beta1/MutatingAdmissionPolicy"},
			wantAPI: "admissionregistration.k8s.io/v1beta1", wantNotes: "kubectl label namespace"},
		{name: "API absent", apiVersions: []string{}, wantNotes: "Namespace opt-in is off"},
		{name: "switched off", values: "optIn: {enabled: false}"},
		// Every pod is Ballast's already.
		{name: "replaceDefault", values: "global: {schedulerMode: replaceDefault}"},
		{name: "no Ballast scheduler", values: "scheduler: {enabled: false}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			manifest, notes, err := Render(context.Background(), RenderOptions{Values: valuesFromYAML(t, tc.values), APIVersions: tc.apiVersions})
			if err != nil {
				t.Fatal(err)
			}
			policy, found := find(splitManifest(t, manifest), "MutatingAdmissionPolicy", "ballast-opt-in")
			switch {
			case tc.wantAPI == "" && found:
				t.Errorf("policy rendered: %v", policy.raw)
			case tc.wantAPI != "" && !found:
				t.Error("no policy rendered")
			case found && policy.raw["apiVersion"] != tc.wantAPI:
				t.Errorf("apiVersion %v, want %s", policy.raw["apiVersion"], tc.wantAPI)
			}
			if tc.wantNotes != "" && !strings.Contains(notes, tc.wantNotes) {
				t.Errorf("NOTES lack %q:\n%s", tc.wantNotes, notes)
			}
		})
	}
}

func TestOptInSchemaRefusesBadSelectors(t *testing.T) {
	for _, doc := range []string{
		"optIn: {namespaceSelector: {matchLabels: {a: 1}}}",
		"optIn: {namespaceSelector: {matchExpressions: [{key: a, operator: Maybe}]}}",
		"optIn: {objectSelector: {matchNames: [a]}}",
		"optIn: {enabled: yes please}",
	} {
		if _, _, err := Render(context.Background(), RenderOptions{Values: valuesFromYAML(t, doc)}); err == nil {
			t.Errorf("values %q rendered; want a schema error", doc)
		}
	}
}
