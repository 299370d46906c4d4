package installation

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

func TestNamespaceAlias(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    string
		wantErr string
	}{
		{args: nil, want: "ballast-system"},
		{args: []string{"--ballast-namespace", "sched"}, want: "sched"},
		{args: []string{"-n", "sched"}, want: "sched"},
		{args: []string{"-n", "sched", "--ballast-namespace", "sched"}, want: "sched"},
		{args: []string{"--ballast-namespace", "a", "-n", "b"}, wantErr: "disagree"},
		{args: []string{"-n", "b", "--ballast-namespace", "a"}, wantErr: "disagree"},
	} {
		var r Release
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		r.AddFlags(fs, true)
		err := fs.Parse(tc.args)
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%v: err = %v, want %q", tc.args, err, tc.wantErr)
			}
		case err != nil || r.Namespace != tc.want:
			t.Errorf("%v: %q, %v; want %q", tc.args, r.Namespace, err, tc.want)
		}
	}
}
