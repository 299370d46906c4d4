package options

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/ballast-sched/ballast/core/flagdoc"
)

// TestFlagsAsDocumented holds docs/load-watcher.md's table of flags to the
// command's: every flag has a row, no row names a flag that is gone, and
// every default stated is the flag's. klog's own flags are klog's to
// document.
func TestFlagsAsDocumented(t *testing.T) {
	fs := pflag.NewFlagSet("load-watcher", pflag.ContinueOnError)
	Default().AddFlags(fs)
	flagdoc.Check(t, "../../../docs/load-watcher.md", fs, "version")
}
