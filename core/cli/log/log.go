// Package log is the ballast CLI's small leveled logger: warnings and errors
// always reach stderr, progress only without -q, detail only with -v.
package log

import (
	"fmt"
	"io"
	"sync"
)

// Logger writes human-readable lines to one writer, safe for concurrent use.
type Logger struct {
	mu        sync.Mutex
	w         io.Writer
	verbosity int
	quiet     bool
}

// New returns a logger writing to w.
func New(w io.Writer) *Logger { return &Logger{w: w} }

// SetVerbosity sets the -v level.
func (l *Logger) SetVerbosity(v int) { l.mu.Lock(); l.verbosity = v; l.mu.Unlock() }

// SetQuiet silences progress and info lines (-q); warnings and errors still show.
func (l *Logger) SetQuiet(q bool) { l.mu.Lock(); l.quiet = q; l.mu.Unlock() }

// Verbosity returns the -v level.
func (l *Logger) Verbosity() int { l.mu.Lock(); defer l.mu.Unlock(); return l.verbosity }

// Quiet reports whether progress output is silenced.
func (l *Logger) Quiet() bool { l.mu.Lock(); defer l.mu.Unlock(); return l.quiet }

// Writer is where the logger writes.
func (l *Logger) Writer() io.Writer { return l.w }

// Infof prints a progress line unless quiet.
func (l *Logger) Infof(format string, args ...any) {
	if l.Quiet() {
		return
	}
	l.printf(format, args...)
}

// V returns a logger that prints only at verbosity level or above.
func (l *Logger) V(level int) Verbose {
	return Verbose{l: l, enabled: !l.Quiet() && l.Verbosity() >= level}
}

// Warnf always prints.
func (l *Logger) Warnf(format string, args ...any) { l.printf("WARNING: "+format, args...) }

// Errorf always prints.
func (l *Logger) Errorf(format string, args ...any) { l.printf(format, args...) }

func (l *Logger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format+"\n", args...)
}

// Verbose prints only when its level is enabled.
type Verbose struct {
	l       *Logger
	enabled bool
}

// Enabled reports whether lines at this level are printed.
func (v Verbose) Enabled() bool { return v.enabled }

// Infof prints when enabled.
func (v Verbose) Infof(format string, args ...any) {
	if v.enabled {
		v.l.printf(format, args...)
	}
}
