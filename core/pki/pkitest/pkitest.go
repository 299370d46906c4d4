// Package pkitest writes certificates for tests, failing the test when it
// cannot.
package pkitest

import (
	"net"
	"testing"

	"github.com/ballast-sched/ballast/core/pki"
)

// SelfSigned writes a fresh self-signed serving certificate for 127.0.0.1
// and localhost, and its key, into dir as <name>.crt and <name>.key. The
// certificate is its own CA: pass certFile as a client's CA bundle.
func SelfSigned(t testing.TB, dir, name string) (certFile, keyFile string) {
	t.Helper()
	p, err := pki.SelfSigned(dir, name, pki.Leaf{CommonName: name, Server: true,
		IPs: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	return p.CertFile, p.KeyFile
}
