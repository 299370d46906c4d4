package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "kubeconfig")
	// An older file, readable by everyone: the new content must not inherit that.
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	changed, err := Write(path, []byte("token: secret\n"), 0o600)
	if err != nil || !changed {
		t.Fatalf("Write = %t, %v; want a change", changed, err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	if got, _ := os.ReadFile(path); string(got) != "token: secret\n" {
		t.Errorf("content %q", got)
	}
	if changed, err := Write(path, []byte("token: secret\n"), 0o600); err != nil || changed {
		t.Errorf("same content again: changed=%t err=%v", changed, err)
	}
	// The same content with another mode is a change.
	if changed, err := Write(path, []byte("token: secret\n"), 0o640); err != nil || !changed {
		t.Errorf("mode change: changed=%t err=%v", changed, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left beside the file: %v", entries)
	}
}

func TestCopyFile(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "images.tar")
	if err := os.WriteFile(src, []byte("layers"), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, "agent", "images", "images.tar")
	if changed, err := CopyFile(dst, src, 0o644); err != nil || !changed {
		t.Fatalf("CopyFile = %t, %v; want a change", changed, err)
	}
	if got, _ := os.ReadFile(dst); string(got) != "layers" {
		t.Errorf("content %q, want the source's", got)
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	if changed, err := CopyFile(dst, src, 0o644); err != nil || changed {
		t.Errorf("same content again: changed=%t err=%v", changed, err)
	}
	if err := os.WriteFile(src, []byte("newer layers"), 0o600); err != nil {
		t.Fatal(err)
	}
	if changed, err := CopyFile(dst, src, 0o644); err != nil || !changed {
		t.Errorf("new content: changed=%t err=%v", changed, err)
	}
	if _, err := CopyFile(dst, filepath.Join(dir, "missing.tar"), 0o644); err == nil {
		t.Error("CopyFile from a missing source succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(dst))
	if len(entries) != 1 {
		t.Errorf("temporary files left beside the copy: %v", entries)
	}
}
