package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

func TestReference(t *testing.T) {
	root := &cobra.Command{Use: "tool", Short: "Do things"}
	root.PersistentFlags().CountP("verbosity", "v", "log detail")
	install := &cobra.Command{Use: "install", Short: "Install it.", Long: "install puts it\non the cluster.",
		Example: "  tool install --wait 2m", RunE: func(*cobra.Command, []string) error { return nil }}
	install.Flags().Duration("wait", 5*time.Minute, "how long to wait | at most")
	install.Flags().StringSlice("set", nil, "values")
	install.Flags().String("secret", "", "not for users")
	_ = install.Flags().MarkHidden("secret")
	hidden := &cobra.Command{Use: "debug", Hidden: true, RunE: func(*cobra.Command, []string) error { return nil }}
	root.AddCommand(install, hidden)

	got := string(Reference(root, "Intro.\n"))
	for _, want := range []string{
		"# `tool` command reference\n\nIntro.\n\n## tool\n\nDo things.\n",
		"| `-v`, `--verbosity` |  | log detail |",
		"## tool install\n\nInstall it.\n\n```text\ninstall puts it\non the cluster.\n```\n\n```\ntool install [flags]\n```\n",
		"Examples:\n\n```\n  tool install --wait 2m\n```\n",
		"| `--wait` | `5m0s` | how long to wait \\| at most |",
		"| `--set` |  | values |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the reference lacks %q:\n%s", want, got)
		}
	}
	for _, absent := range []string{"--secret", "## tool debug", "## tool help", "## tool completion"} {
		if strings.Contains(got, absent) {
			t.Errorf("the reference shows %q:\n%s", absent, got)
		}
	}
	// An inherited flag is root's, listed under root only.
	if n := strings.Count(got, "`--verbosity`"); n != 1 {
		t.Errorf("--verbosity listed %d times, want once under root:\n%s", n, got)
	}
}
