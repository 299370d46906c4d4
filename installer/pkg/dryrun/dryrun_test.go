package dryrun

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestObjects(t *testing.T) {
	objs, err := Objects("---\n# Source: a\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n# Source: empty\n---\napiVersion: v1\nkind: Service\nmetadata: {name: b, namespace: c}\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || objs[0].GetKind() != "ConfigMap" || objs[1].GetNamespace() != "c" {
		t.Errorf("want a ConfigMap and a Service in c, got %v", objs)
	}
}

func TestWriteAndRefused(t *testing.T) {
	verdicts := []Verdict{
		{Kind: "Deployment", Namespace: "ns", Name: "a"},
		{Kind: "Pod", Namespace: "ns", Name: "a-…", PodOf: "a"},
		{Kind: "ClusterRole", Name: "r", Exists: true},
		{Kind: "Service", Namespace: "ns", Name: "s", Err: errors.New(`Service "s" is invalid`)},
		{Kind: "ConfigMap", Namespace: "other", Name: "c", NotChecked: "namespace other does not exist yet"},
	}
	var b bytes.Buffer
	Write(&b, verdicts)
	for _, want := range []string{
		`  refused   Service ns/s: Service "s" is invalid`,
		"  create    Deployment ns/a\n",
		"  update    ClusterRole r\n",
		"the API server accepts 2 objects (1 to create, 1 to update), and the pods of 1 Deployments; it refuses 1.",
		"Not sent, checked offline only: 1 objects: namespace other does not exist yet",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	if err := Refused(verdicts); err == nil || !strings.Contains(err.Error(), "refuses 1 of the release's objects") || !strings.Contains(err.Error(), "Service ns/s") {
		t.Errorf("Refused: %v", err)
	}
	if err := Refused(verdicts[:3]); err != nil {
		t.Errorf("Refused of accepted objects: %v", err)
	}
}
