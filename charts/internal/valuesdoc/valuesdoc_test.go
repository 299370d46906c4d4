package valuesdoc

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	in := `
# -- A documented string.
name: ""
group:
  # -- Spans
  # two lines.
  count: 3
  undocumented: true
# -- A documented map is one entry.
resources:
  limits: {memory: 1Mi}
`
	entries, undocumented, err := Parse([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{Key: "name", Type: "string", Default: `""`, Description: "A documented string."},
		{Key: "group.count", Type: "int", Default: "3", Description: "Spans two lines."},
		{Key: "resources", Type: "object", Default: `{"limits":{"memory":"1Mi"}}`, Description: "A documented map is one entry."},
	}
	if diff := cmp.Diff(want, entries); diff != "" {
		t.Errorf("entries (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"group.undocumented"}, undocumented); diff != "" {
		t.Errorf("undocumented (-want,+got):\n%s", diff)
	}
}

// TestChartValuesAreDocumentedAndTheReferenceIsCurrent keeps values.yaml and docs/values.md in step.
func TestChartValuesAreDocumentedAndTheReferenceIsCurrent(t *testing.T) {
	data, err := os.ReadFile("../../ballast/values.yaml")
	if err != nil {
		t.Fatal(err)
	}
	entries, undocumented, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(undocumented) > 0 {
		t.Errorf("values without a \"# --\" comment: %v", undocumented)
	}
	if len(entries) < 100 {
		t.Errorf("only %d documented values", len(entries))
	}
	doc, err := os.ReadFile("../../../docs/values.md")
	if err != nil {
		t.Fatalf("%v (run hack/gen-values-doc.sh)", err)
	}
	if diff := cmp.Diff(Markdown(entries), string(doc)); diff != "" {
		t.Errorf("docs/values.md is stale; run hack/gen-values-doc.sh (-want,+got):\n%s", diff)
	}
}
