package stack

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestFindPeerScheduler(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, peerSchedulerPath)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	nested := filepath.Join(dir, "simulator", "sim")
	if err := os.MkdirAll(nested, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(nested)
	t.Setenv(PeerSchedulerEnv, "")
	if got, err := FindPeerScheduler(); err != nil || got != bin {
		t.Errorf("from a subdirectory: FindPeerScheduler() = %q, %v; want %q", got, err, bin)
	}
	t.Setenv(PeerSchedulerEnv, filepath.Join(dir, "elsewhere"))
	if _, err := FindPeerScheduler(); err == nil {
		t.Errorf("with %s naming a missing file: no error", PeerSchedulerEnv)
	}
	t.Setenv(PeerSchedulerEnv, "")
	t.Chdir(t.TempDir())
	if _, err := FindPeerScheduler(); !errors.Is(err, ErrNoPeerScheduler) {
		t.Errorf("without a binary: error %v, want ErrNoPeerScheduler", err)
	}
}
