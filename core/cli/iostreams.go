// Package cli holds what every ballast command shares: its input and output
// streams, -v and -q, and how a command tree runs as a program.
package cli

import (
	"io"
	"os"
)

// IOStreams are the streams a command reads and writes. Results go to Out;
// progress and logs go to ErrOut, so `ballast render > out.yaml` stays clean.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// StandardIOStreams returns the process's stdin, stdout and stderr.
func StandardIOStreams() IOStreams {
	return IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}
