package cluster

import (
	"fmt"
	"os"
	"sync"

	"k8s.io/klog/v2"
	"k8s.io/kubernetes/test/utils/ktesting"
)

// Standalone lets a program that is not a test (the demo, `ballast sim`)
// start a Cluster. kube-apiserver's in-process starter takes a test handle;
// Standalone provides one whose failures become errors, whose log lines go to
// klog at V(Verbosity), and whose cleanups run at Close.
type Standalone struct {
	// Verbosity is the klog level control-plane log lines are written at.
	Verbosity klog.Level

	mu       sync.Mutex
	cleanups []func()
	failed   bool
	failure  string
}

var _ ktesting.TB = &Standalone{}

// NewStandalone returns a handle that logs the control plane at klog V(5).
func NewStandalone() *Standalone { return &Standalone{Verbosity: 5} }

// Close runs the registered cleanups, newest first.
func (s *Standalone) Close() {
	s.mu.Lock()
	cleanups := s.cleanups
	s.cleanups = nil
	s.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
}

// Err reports the first failure recorded through the handle.
func (s *Standalone) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failed {
		return nil
	}
	return fmt.Errorf("control plane: %s", s.failure)
}

func (s *Standalone) Cleanup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanups = append(s.cleanups, f)
}

func (s *Standalone) fail(msg string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.failed {
		s.failed, s.failure = true, msg
	}
}

func (s *Standalone) log(msg string) { klog.V(s.Verbosity).InfoDepth(2, msg) }

func (s *Standalone) Attr(key, value string)            {}
func (s *Standalone) Chdir(dir string)                  { s.Fatalf("Chdir is not supported outside tests") }
func (s *Standalone) Error(args ...any)                 { s.fail(fmt.Sprint(args...)); s.log(fmt.Sprint(args...)) }
func (s *Standalone) Errorf(format string, args ...any) { s.Error(fmt.Sprintf(format, args...)) }
func (s *Standalone) Fail()                             { s.fail("failed") }
func (s *Standalone) Failed() bool                      { return s.Err() != nil }
func (s *Standalone) Fatal(args ...any)                 { s.Error(args...); panic(s.Err()) }
func (s *Standalone) Fatalf(format string, args ...any) { s.Fatal(fmt.Sprintf(format, args...)) }
func (s *Standalone) FailNow()                          { s.Fatal("FailNow") }
func (s *Standalone) Helper()                           {}
func (s *Standalone) Log(args ...any)                   { s.log(fmt.Sprint(args...)) }
func (s *Standalone) Logf(format string, args ...any)   { s.log(fmt.Sprintf(format, args...)) }
func (s *Standalone) Name() string                      { return "ballast" }
func (s *Standalone) Setenv(key, value string)          { _ = os.Setenv(key, value) }
func (s *Standalone) Skip(args ...any)                  { s.Fatal(args...) }
func (s *Standalone) Skipf(format string, args ...any)  { s.Fatalf(format, args...) }
func (s *Standalone) SkipNow()                          { s.Fatal("SkipNow") }
func (s *Standalone) Skipped() bool                     { return false }
func (s *Standalone) TempDir() string {
	dir, err := os.MkdirTemp("", "ballast-")
	if err != nil {
		s.Fatalf("creating a temp dir: %v", err)
	}
	s.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}
