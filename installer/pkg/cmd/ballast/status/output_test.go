package status

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/installer/pkg/health"
)

func TestWritePrintsOneDocument(t *testing.T) {
	r := health.Report{Namespace: "ballast-system", UsageErr: errors.New("no connection to the API server to reach load-watcher through"),
		Components: []health.Component{{Name: "scheduler", Found: true, Replicas: 1}}}
	for _, output := range []string{"json", "yaml"} {
		t.Run(output, func(t *testing.T) {
			var out bytes.Buffer
			if err := write(&out, r, output); err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatalf("not one %s document: %v\n%s", output, err, out.String())
			}
			if output == "json" && !json.Valid(out.Bytes()) {
				t.Errorf("not JSON:\n%s", out.String())
			}
			problems, _ := doc["problems"].([]any)
			if doc["healthy"] != false || len(problems) != 2 {
				t.Errorf("healthy %v, problems %v; want false and two problems", doc["healthy"], doc["problems"])
			}
			if _, ok := doc["loadWatcher"].(map[string]any)["error"]; !ok {
				t.Errorf("loadWatcher.error missing:\n%s", out.String())
			}
		})
	}
	var out bytes.Buffer
	if err := write(&out, r, ""); err != nil || !strings.Contains(out.String(), "COMPONENT") {
		t.Errorf("empty output: want the table, got %v:\n%s", err, out.String())
	}
}
