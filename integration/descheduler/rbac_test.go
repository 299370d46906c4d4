package integration

import (
	"context"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/descheduler/pkg/schedulerfit"
)

// The descheduler's ClusterRole, as the chart renders it, lets it list and
// watch everything the scheduler's filters read when they judge a
// destination: without one of them its informers never sync and it never
// runs a cycle.
func TestClusterRoleGrantsWhatTheFitReads(t *testing.T) {
	manifest, _, err := charts.Render(context.Background(), charts.RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.ClusterRole
	for _, doc := range strings.Split(manifest, "\n---") {
		var r rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &r); err != nil || r.Kind != "ClusterRole" || !strings.HasSuffix(r.Name, "-descheduler") {
			continue
		}
		role = &r
	}
	if role == nil {
		t.Fatal("the chart renders no descheduler ClusterRole")
	}
	allows := func(group, resource, verb string) bool {
		return slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool {
			return slices.Contains(r.APIGroups, group) && slices.Contains(r.Resources, resource) && slices.Contains(r.Verbs, verb)
		})
	}
	for _, r := range schedulerfit.Reads {
		for _, verb := range []string{"list", "watch"} {
			if !allows(r.Group, r.Resource, verb) {
				t.Errorf("the descheduler's ClusterRole %s does not allow %s %s in group %q", role.Name, verb, r.Resource, r.Group)
			}
		}
	}
}
