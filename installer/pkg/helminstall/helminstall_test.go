package helminstall

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/charts"
)

// The scheduler and descheduler take Leases at run time that Helm never
// created; uninstall finds them in the rendered release.
func TestLeaderLeasesOfTheRenderedChart(t *testing.T) {
	tests := []struct {
		name   string
		values map[string]any
		want   []types.NamespacedName
	}{
		{
			name: "defaults",
			want: []types.NamespacedName{
				{Namespace: "ballast-system", Name: "ballast-scheduler"},
				{Namespace: "ballast-system", Name: "ballast-descheduler"},
			},
		},
		{
			name: "names chosen in the values",
			values: map[string]any{
				"scheduler":   map[string]any{"leaderElection": map[string]any{"resourceName": "sched-lock"}},
				"descheduler": map[string]any{"leaderElection": map[string]any{"resourceName": "desched-lock"}},
			},
			want: []types.NamespacedName{
				{Namespace: "ballast-system", Name: "sched-lock"},
				{Namespace: "ballast-system", Name: "desched-lock"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			manifest, _, err := charts.Render(context.Background(), charts.RenderOptions{Namespace: "ballast-system", Values: tc.values})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, LeaderLeases(manifest)); diff != "" {
				t.Errorf("LeaderLeases (-want,+got):\n%s", diff)
			}
		})
	}
}
