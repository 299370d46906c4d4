package status

import (
	"io"

	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/installer/pkg/health"
)

// write prints r as tables, or as one json or yaml document.
func write(w io.Writer, r health.Report, output string) error {
	if output == "" {
		return r.Print(w)
	}
	return cli.WriteDocument(w, r.Status(), output)
}
