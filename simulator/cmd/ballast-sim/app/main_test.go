package app

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/core/version"
)

func run(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = Run(log.New(&errOut), cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args)
	return out.String(), errOut.String(), err
}

func TestVersion(t *testing.T) {
	stdout, stderr, err := run(t, "--version")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	// A test binary is linked without -X: the version is the default.
	if want := version.Line("ballast-sim") + "\n"; stdout != want || !strings.HasPrefix(stdout, "ballast-sim dev") {
		t.Errorf("--version printed %q, want %q", stdout, want)
	}
}

func TestHelpNamesTheCommandAsUsersTypeIt(t *testing.T) {
	stdout, _, err := run(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ballast sim [SCENARIO.yaml | --scenario NAME]", "ballast sim [command]", "report", "-v, --verbosity", "-q, --quiet"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
}

func TestErrorIsPrintedOnce(t *testing.T) {
	stdout, stderr, err := run(t, "--scenario", "nope", "-q")
	if err == nil || cli.ExitCode(err) != 1 {
		t.Fatalf("err = %v, want one that exits 1", err)
	}
	if stdout != "" {
		t.Errorf("stdout not empty on error:\n%s", stdout)
	}
	if want := "ERROR: no built-in scenario \"nope\""; strings.Count(stderr, want) != 1 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr, want %q on one line alone:\n%s", want, stderr)
	}
}
