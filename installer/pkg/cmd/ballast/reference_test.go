package ballast

import (
	"bytes"
	"flag"
	"io"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/log"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md from the commands")

const referencePage = "../../../../docs/cli.md"

const referenceIntro = "Every command and flag of the `ballast` CLI, as `ballast <command> --help` prints them. This page is\n" +
	"generated from the commands themselves (`hack/gen-cli-doc.sh`) and a test fails when it differs from them.\n"

// TestCLIReference keeps docs/cli.md what the commands say of themselves:
// a flag added, removed or given another default changes the page, and
// `go test ./pkg/cmd/ballast -run TestCLIReference -update` (what
// hack/gen-cli-doc.sh runs) writes it again.
func TestCLIReference(t *testing.T) {
	root := NewCommand(log.New(io.Discard), cli.IOStreams{In: &bytes.Buffer{}, Out: io.Discard, ErrOut: io.Discard})
	got := cli.Reference(root, referenceIntro)
	if *update {
		if err := os.WriteFile(referencePage, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(referencePage)
	if err != nil {
		t.Fatalf("%v (hack/gen-cli-doc.sh writes it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("docs/cli.md is not what the commands say; run hack/gen-cli-doc.sh (-page +commands):\n%s", diff)
	}
}
