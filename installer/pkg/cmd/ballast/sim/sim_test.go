package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
)

// fakePlugin prints its arguments, one per line, then its stdin, writes a
// line to stderr and exits with the status in $FAKE_EXIT. It uses shell
// builtins only: the tests set PATH to its directory.
const fakePlugin = `#!/bin/sh
for a in "$@"; do echo "arg:$a"; done
while IFS= read -r line; do echo "$line"; done
echo "plugin stderr" >&2
exit "${FAKE_EXIT:-0}"
`

// execute runs the sim command as the root command does: errors are
// returned, not printed by cobra.
func execute(stdin string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	c := NewCommand(log.New(&errOut), cli.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut})
	c.SilenceErrors, c.SilenceUsage = true, true
	c.SetArgs(args)
	err = c.Execute()
	return out.String(), errOut.String(), err
}

// writePlugin writes a program named ballast-sim into a new directory and
// returns the directory.
func writePlugin(t *testing.T, script string, mode os.FileMode) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake plugin is a shell script")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, Plugin), []byte(script), mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunPassesArgumentsStreamsAndStatus(t *testing.T) {
	t.Setenv("PATH", writePlugin(t, fakePlugin, 0o755))
	for _, tc := range []struct {
		name string
		exit string
		want error
	}{
		{name: "success", exit: "0"},
		{name: "failure", exit: "3", want: &cli.ExitError{Code: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("FAKE_EXIT", tc.exit)
			// Flags the sim command does not know, --help and a value with a space all reach the plugin as given.
			stdout, stderr, err := execute("from stdin\n", "--scenario", "homelab-mixed", "-v", "2", "--help", "a b")
			if diff := cmp.Diff(tc.want, err); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			want := "arg:--scenario\narg:homelab-mixed\narg:-v\narg:2\narg:--help\narg:a b\nfrom stdin\n"
			if diff := cmp.Diff(want, stdout); diff != "" {
				t.Errorf("stdout (-want,+got):\n%s", diff)
			}
			if stderr != "plugin stderr\n" {
				t.Errorf("stderr = %q, want the plugin's line alone", stderr)
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	onPath := writePlugin(t, fakePlugin, 0o755)
	beside := writePlugin(t, fakePlugin, 0o755)
	notExecutable := writePlugin(t, fakePlugin, 0o644)
	empty := t.TempDir()
	for _, tc := range []struct {
		name string
		self string // the running ballast
		path string
		want string
	}{
		{"next to ballast first", filepath.Join(beside, "ballast"), onPath, filepath.Join(beside, Plugin)},
		{"then on PATH", filepath.Join(empty, "ballast"), onPath, filepath.Join(onPath, Plugin)},
		{"a file that is not executable is skipped", filepath.Join(notExecutable, "ballast"), onPath, filepath.Join(onPath, Plugin)},
		{"unknown executable", "", onPath, filepath.Join(onPath, Plugin)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", tc.path)
			got, err := lookPath(tc.self)
			if err != nil || got != tc.want {
				t.Errorf("lookPath(%q) = %q, %v; want %q", tc.self, got, err, tc.want)
			}
		})
	}
}

func TestMissingPluginSaysHowToGetIt(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, _, err := execute("", "--list")
	var exit *cli.ExitError
	if err == nil || errors.As(err, &exit) {
		t.Fatalf("err = %v, want an error saying the plugin is missing", err)
	}
	asset := Plugin + "-" + runtime.GOOS + "-" + runtime.GOARCH
	for _, want := range []string{"nor on PATH", "release asset " + asset, "go build ./cmd/ballast-sim"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not mention %q: %v", want, err)
		}
	}
}
