package options

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/flagdoc"
)

// TestFlagsAsDocumented holds docs/descheduler.md's table of the flags Ballast adds
// to the upstream command to them: every flag has a row, no row names a
// flag that is gone, and every default stated is the flag's.
func TestFlagsAsDocumented(t *testing.T) {
	fs := pflag.NewFlagSet("descheduler", pflag.ContinueOnError)
	NewOptions().AddFlags(fs)
	flagdoc.Check(t, "../../../docs/descheduler.md", fs, "version")
}
