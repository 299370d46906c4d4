package options

import (
	"os"
	"testing"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/flagdoc"
)

// TestFlagsAsDocumented holds docs/descheduler.md's table of the flags Ballast adds
// to the upstream command to them: every flag has a row, no row names a
// flag that is gone, and every default stated is the flag's.
func TestFlagsAsDocumented(t *testing.T) {
	page, err := os.ReadFile("../../../docs/descheduler.md")
	if err != nil {
		t.Fatal(err)
	}
	fs := pflag.NewFlagSet("descheduler", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	for _, p := range flagdoc.Compare(page, fs, "version") {
		t.Errorf("docs/descheduler.md: %s", p)
	}
}
