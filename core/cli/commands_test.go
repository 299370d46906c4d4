package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestRequireSubcommandSuggests(t *testing.T) {
	root := &cobra.Command{Use: "ballast", SilenceErrors: true, SilenceUsage: true}
	RequireSubcommand(root)
	for _, name := range []string{"install", "uninstall", "status"} {
		root.AddCommand(&cobra.Command{Use: name, RunE: func(*cobra.Command, []string) error { return nil }})
	}
	root.SetOut(io.Discard)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"instal"}, `unknown command "instal" for "ballast"; did you mean install?`},
		{[]string{"stats"}, "did you mean status?"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{nil, "ballast needs a subcommand: one of install, status, uninstall"},
	} {
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

func TestOutputFlagIsAFormat(t *testing.T) {
	var out string
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	AddOutputFlag(fs, &out, "the answer", func(v string) string { return "write a file with --file " + v })
	if err := fs.Parse([]string{"-o", "yaml"}); err != nil || out != "yaml" {
		t.Errorf("-o yaml: %q, %v", out, err)
	}
	err := fs.Parse([]string{"-o", "lw.kubeconfig"})
	if err == nil || !strings.Contains(err.Error(), "want json or yaml") || !strings.Contains(err.Error(), "--file lw.kubeconfig") {
		t.Errorf("-o lw.kubeconfig: %v", err)
	}
}
