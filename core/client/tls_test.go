package client

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/pki/pkitest"
)

// writeCA writes the certificate of a TLS test server as a PEM CA bundle.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "ca.crt")
	block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(file, block, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestClientVerifiesTheServerCertificate(t *testing.T) {
	f := &fixedServer{}
	f.set(t, goodAnswer())
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	otherCA, _ := pkitest.SelfSigned(t, t.TempDir(), "other-ca")
	now := func() time.Time { return answerTime }

	c, err := New(Config{Address: srv.URL, CAFile: writeCA(t, srv), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Refresh(context.Background()); err != nil {
		t.Fatalf("Refresh with the server's CA: %v", err)
	}
	if _, ok := c.Snapshot().Node("a"); !ok {
		t.Errorf("node a not usable over TLS")
	}

	for name, ca := range map[string]string{"another CA": otherCA, "system roots": ""} {
		c, err := New(Config{Address: srv.URL, CAFile: ca, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		err = c.Refresh(context.Background())
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			t.Errorf("%s: Refresh = %v, want an unknown authority error", name, err)
		}
		if c.Snapshot() != nil {
			t.Errorf("%s: a snapshot from an unverified server", name)
		}
	}
}

func TestClientCAFileValidation(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"CA with http", Config{Address: "http://lw:2020", CAFile: notPEM}, "client.caFile"},
		{"missing file", Config{Address: "https://lw:2020", CAFile: filepath.Join(dir, "absent")}, "client.caFile: reading load-watcher CA file"},
		{"not PEM", Config{Address: "https://lw:2020", CAFile: notPEM}, "no PEM certificate"},
		{"oversize limit negative", Config{Address: "https://lw:2020", MaxResponseBytes: -1}, "client.maxResponseBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
