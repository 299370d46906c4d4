package pki

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"os"
	"testing"
)

func TestIssuedCertificatesVerifyAgainstTheirAuthority(t *testing.T) {
	dir := t.TempDir()
	ca, err := NewAuthority(dir, "ca")
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewAuthority(dir, "other-ca")
	if err != nil {
		t.Fatal(err)
	}
	server, err := ca.Issue(dir, "server", Leaf{CommonName: "kube-apiserver", Server: true,
		IPs: []net.IP{net.ParseIP("10.96.0.1")}, DNSNames: []string{"kubernetes.default.svc"}})
	if err != nil {
		t.Fatal(err)
	}
	client, err := ca.Issue(dir, "client", Leaf{CommonName: "system:node:n1", Organization: []string{"system:nodes"}, Client: true})
	if err != nil {
		t.Fatal(err)
	}

	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	otherPool := x509.NewCertPool()
	otherPool.AddCert(other.Cert)
	leaf := func(p Pair) *x509.Certificate {
		t.Helper()
		c, err := tls.LoadX509KeyPair(p.CertFile, p.KeyFile)
		if err != nil {
			t.Fatalf("loading %s: %v", p.CertFile, err)
		}
		x, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	srv, cli := leaf(server), leaf(client)

	for _, name := range []string{"10.96.0.1", "kubernetes.default.svc"} {
		if _, err := srv.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
			t.Errorf("serving certificate for %s: %v", name, err)
		}
	}
	if _, err := srv.Verify(x509.VerifyOptions{Roots: pool, DNSName: "elsewhere.example"}); err == nil {
		t.Error("serving certificate verified for a name it does not hold")
	}
	if _, err := cli.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("client certificate: %v", err)
	}
	if _, err := cli.Verify(x509.VerifyOptions{Roots: otherPool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("client certificate verified against another authority")
	}
	if _, err := cli.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
		t.Error("a client certificate verified as a serving one")
	}
	if got := cli.Subject.Organization; len(got) != 1 || got[0] != "system:nodes" {
		t.Errorf("client groups = %v, want [system:nodes]", got)
	}

	for _, f := range []string{server.KeyFile, client.KeyFile, dir + "/ca.key"} {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s has mode %v, want 0600", f, st.Mode().Perm())
		}
	}
}

func TestServiceAccountKeyPair(t *testing.T) {
	dir := t.TempDir()
	key, pub, err := NewServiceAccountKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{key, pub} {
		if _, err := os.Stat(f); err != nil {
			t.Error(err)
		}
	}
	if st, _ := os.Stat(key); st != nil && st.Mode().Perm() != 0o600 {
		t.Errorf("signing key has mode %v, want 0600", st.Mode().Perm())
	}
}
