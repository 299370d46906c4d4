package certs

import (
	"bytes"
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/pki/pkitest"
)

func TestKeyPairReloadsRotatedFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := pkitest.SelfSigned(t, dir, "serving")
	var reloadErrs []error
	k, err := NewKeyPair(certFile, keyFile, func(err error) { reloadErrs = append(reloadErrs, err) })
	if err != nil {
		t.Fatal(err)
	}
	first, _ := k.GetCertificate(nil)

	// Rotation: a new pair replaces the files (a Secret volume swaps them at once).
	newCert, newKey := pkitest.SelfSigned(t, dir, "rotated")
	rotate(t, newCert, certFile)
	rotate(t, newKey, keyFile)
	second, _ := k.GetCertificate(nil)
	if bytes.Equal(first.Certificate[0], second.Certificate[0]) {
		t.Fatal("the rotated certificate was not picked up")
	}

	// A broken rotation keeps the last good pair and is reported once.
	if err := os.WriteFile(keyFile, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	bump(t, keyFile)
	for range 3 {
		if got, _ := k.GetCertificate(nil); got != second {
			t.Fatal("a broken key replaced the last good pair")
		}
	}
	if len(reloadErrs) != 1 {
		t.Errorf("reload errors reported %d times, want once: %v", len(reloadErrs), reloadErrs)
	}
}

func TestNewKeyPairNamesTheFiles(t *testing.T) {
	dir := t.TempDir()
	certFile, _ := pkitest.SelfSigned(t, dir, "serving")
	_, otherKey := pkitest.SelfSigned(t, dir, "other")
	_, err := NewKeyPair(certFile, otherKey, nil)
	if err == nil || !strings.Contains(err.Error(), certFile) || !strings.Contains(err.Error(), otherKey) {
		t.Errorf("mismatched key: err = %v, want one naming both files", err)
	}
	if _, err := NewKeyPair(filepath.Join(dir, "absent.crt"), otherKey, nil); err == nil {
		t.Error("missing certificate accepted")
	}
	if _, err := Pool(otherKey, "test CA file"); err == nil || !strings.Contains(err.Error(), "no PEM certificate in test CA file") {
		t.Errorf("Pool of a key: err = %v", err)
	}
	cfg := (&KeyPair{}).ServerConfig()
	if cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("MinVersion = %x", cfg.MinVersion)
	}
}

func rotate(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
	bump(t, to)
}

// bump moves a file's modification time forward, so a change is seen even
// within the file system's timestamp granularity.
func bump(t *testing.T, file string) {
	t.Helper()
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(file, later, later); err != nil {
		t.Fatal(err)
	}
}
