package helmjob

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadEnv(t *testing.T) {
	lookup := func(m map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}
	got, err := ReadEnv(lookup(map[string]string{
		"NAME": "ballast", "TARGET_NAMESPACE": "ballast-system", "CHART_NAMESPACE": "kube-system",
		"HELM_DRIVER": "configmap", "TIMEOUT": "10m0s", "FAILURE_POLICY": "abort", "SERVER_SIDE": "false",
		"FORCE_CONFLICTS": "true", "EXPECTED_RELEASE_REVISION": "3", "CONFIG_HASH": "SHA256=AB", "PLAIN_HTTP": "false",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Env{Name: "ballast", TargetNamespace: "ballast-system", ChartNamespace: "kube-system", Driver: "configmap",
		Timeout: 10 * time.Minute, FailurePolicy: PolicyAbort, ServerSide: "false", ForceConflicts: true,
		ExpectedRevision: "3", ConfigHash: "SHA256=AB"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ReadEnv (-want,+got):\n%s", diff)
	}

	defaults, err := ReadEnv(lookup(map[string]string{"NAME": "x", "TARGET_NAMESPACE": "y"}))
	if err != nil {
		t.Fatal(err)
	}
	if defaults.Driver != "secret" || defaults.FailurePolicy != PolicyReinstall || defaults.ServerSide != "auto" {
		t.Errorf("defaults: driver %q, policy %q, server side %q; want secret, reinstall, auto",
			defaults.Driver, defaults.FailurePolicy, defaults.ServerSide)
	}

	// Every problem at once.
	_, err = ReadEnv(lookup(map[string]string{"TIMEOUT": "soon", "HELM_DRIVER": "sql", "PLAIN_HTTP": "maybe"}))
	if err == nil {
		t.Fatal("ReadEnv accepted a broken environment")
	}
	for _, want := range []string{"NAME is not set", "TARGET_NAMESPACE is not set", `TIMEOUT="soon"`, `HELM_DRIVER="sql"`, `PLAIN_HTTP="maybe"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestParseArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    Action
		wantErr bool
	}{
		{name: "delete", args: []string{"delete"}, want: Action{Delete: true}},
		{name: "install with every flag", args: []string{"install", "--namespace", "ballast-system", "--create-namespace",
			"--take-ownership", "--version", "1.2.3", "--set", "a=1", "--set-string", "b=x\\,y", "--set=c=true"},
			want: Action{Namespace: "ballast-system", CreateNamespace: true, TakeOwnership: true, Version: "1.2.3",
				Set: []string{"a=1", "c=true"}, SetString: []string{"b=x\\,y"}}},
		{name: "bare install", args: []string{"install"}, want: Action{}},
		{name: "no command", args: nil, wantErr: true},
		{name: "unknown command", args: []string{"upgrade"}, wantErr: true},
		{name: "unknown flag", args: []string{"install", "--wait"}, wantErr: true},
		{name: "flag without value", args: []string{"install", "--namespace"}, wantErr: true},
		{name: "delete with arguments", args: []string{"delete", "--namespace", "x"}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseArgs(tc.args)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ParseArgs(%q) error = %v, want error %t", tc.args, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ParseArgs(%q) (-want,+got):\n%s", tc.args, diff)
			}
		})
	}
}
