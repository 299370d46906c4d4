// Progress shows the progress of long steps: a spinner on a terminal,
// plain ✓/✗ lines elsewhere (CI logs, pipes).
package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/ballast-sched/ballast/core/cli/log"
)

// Progress reports one step at a time.
type Progress struct {
	logger *log.Logger
	tty    bool

	mu      sync.Mutex
	msg     string
	stop    chan struct{}
	stopped chan struct{}
}

// NewProgress returns a Progress writing through logger.
func NewProgress(logger *log.Logger) *Progress {
	return &Progress{logger: logger, tty: isTerminal(logger.Writer())}
}

// Start begins a step; a running step is ended as failed first.
func (s *Progress) Start(msg string) {
	s.End(false)
	if s.logger.Quiet() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msg = msg
	if !s.tty {
		return
	}
	s.stop, s.stopped = make(chan struct{}), make(chan struct{})
	go s.spin(s.stop, s.stopped)
}

// Update replaces the message of the running step (e.g. a readiness count).
// Without a terminal each update is a line of its own.
func (s *Progress) Update(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msg == "" || s.msg == msg {
		return
	}
	s.msg = msg
	if !s.tty {
		fmt.Fprintf(s.logger.Writer(), "   %s\n", msg)
	}
}

// End finishes the running step with ✓ or ✗.
func (s *Progress) End(success bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.msg == "" {
		return
	}
	if s.stop != nil {
		// The spinner takes mu to read the message; let it finish without it.
		stop, stopped := s.stop, s.stopped
		s.mu.Unlock()
		close(stop)
		<-stopped
		s.mu.Lock()
		s.stop = nil
		fmt.Fprint(s.logger.Writer(), "\r\033[K")
	}
	mark := "✓"
	if !success {
		mark = "✗"
	}
	fmt.Fprintf(s.logger.Writer(), " %s %s\n", mark, s.msg)
	s.msg = ""
}

func (s *Progress) spin(stop, stopped chan struct{}) {
	defer close(stopped)
	frames := []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		s.mu.Lock()
		msg := s.msg
		s.mu.Unlock()
		fmt.Fprintf(s.logger.Writer(), "\r\033[K %s %s", frames[i%len(frames)], msg)
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
