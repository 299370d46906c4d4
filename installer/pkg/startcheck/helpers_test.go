package startcheck

import (
	"context"
	"testing"

	"github.com/ballast-sched/ballast/charts"
)

// renderUnchecked renders vals with neither the chart's schema nor its
// checks across components (templates/validate.yaml): the objects a user
// of the chart would get without them, for the CLI's own checks to judge.
func renderUnchecked(t *testing.T, ctx context.Context, vals map[string]any) (string, error) {
	t.Helper()
	c, err := charts.Load()
	if err != nil {
		t.Fatal(err)
	}
	c.Schema = nil
	kept := c.Templates[:0]
	for _, f := range c.Templates {
		if f.Name != "templates/validate.yaml" {
			kept = append(kept, f)
		}
	}
	c.Templates = kept
	manifest, _, err := charts.Render(ctx, charts.RenderOptions{Values: vals, Chart: c})
	return manifest, err
}
