package cli

import (
	"fmt"
	"io"
)

// WriteSteps writes steps as a numbered list, one step a line.
func WriteSteps(w io.Writer, steps []string) {
	for i, s := range steps {
		fmt.Fprintf(w, "  %d. %s\n", i+1, s)
	}
}
