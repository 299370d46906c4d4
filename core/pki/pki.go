// Package pki issues every certificate Ballast's tests and lanes use: the
// certificates of a throwaway cluster (one cluster CA for the API server, the
// kubelet and every client, a front-proxy CA for API aggregation
// (metrics-server), and the service-account signing key, laid out as kubeadm
// lays them out, so every component is configured with the flags a real
// cluster uses), and self-signed certificates for a single TLS endpoint.
package pki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// validity is long enough for any test run and short enough that a leaked
// file is useless soon.
const validity = 24 * time.Hour

// Authority is a CA that signs leaf certificates.
type Authority struct {
	Cert *x509.Certificate
	Key  crypto.Signer
	// CertFile is the CA certificate in PEM, for --client-ca-file and the like.
	CertFile string
}

// Pair is a certificate and its key on disk.
type Pair struct {
	CertFile, KeyFile string
	// CertPEM and KeyPEM are the files' contents, for kubeconfigs.
	CertPEM, KeyPEM []byte
}

// Leaf describes a certificate to issue.
type Leaf struct {
	// CommonName is the user name of a client certificate.
	CommonName string
	// Organization lists the groups of a client certificate.
	Organization []string
	// DNSNames and IPs make it a serving certificate.
	DNSNames []string
	IPs      []net.IP
	// Client and Server choose the extended key usages.
	Client, Server bool
}

// NewAuthority creates a self-signed CA and writes its certificate to
// dir/name.crt and key to dir/name.key.
func NewAuthority(dir, name string) (*Authority, error) {
	tmpl := template(Leaf{CommonName: name})
	tmpl.KeyUsage |= x509.KeyUsageCertSign
	tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	pair, cert, key, err := create(dir, name, tmpl, nil, nil)
	if err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key, CertFile: pair.CertFile}, nil
}

// Issue signs a leaf certificate and writes it to dir/name.crt and
// dir/name.key.
func (a *Authority) Issue(dir, name string, l Leaf) (Pair, error) {
	pair, _, _, err := create(dir, name, template(l), a.Cert, a.Key)
	return pair, err
}

// SelfSigned writes a certificate for l that is its own CA to dir/name.crt
// and dir/name.key: a client trusts a server that presents it by naming
// CertFile as its CA bundle, with no authority in between (what a test of a
// single TLS endpoint needs).
func SelfSigned(dir, name string, l Leaf) (Pair, error) {
	tmpl := template(l)
	tmpl.KeyUsage |= x509.KeyUsageCertSign
	tmpl.BasicConstraintsValid, tmpl.IsCA = true, true
	pair, _, _, err := create(dir, name, tmpl, nil, nil)
	return pair, err
}

// template is the certificate l describes, valid from a minute ago for
// validity.
func template(l Leaf) *x509.Certificate {
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: l.CommonName, Organization: l.Organization},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		DNSNames:     l.DNSNames,
		IPAddresses:  l.IPs,
	}
	if l.Client {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageClientAuth)
	}
	if l.Server {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	return tmpl
}

// create makes a key, signs tmpl with parent's key (tmpl itself and the new
// key when parent is nil: self-signed) and writes both to dir.
func create(dir, name string, tmpl, parent *x509.Certificate, parentKey crypto.Signer) (Pair, *x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Pair{}, nil, nil, fmt.Errorf("generating the %s key: %w", name, err)
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), parentKey)
	if err != nil {
		return Pair{}, nil, nil, fmt.Errorf("signing %s: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return Pair{}, nil, nil, fmt.Errorf("parsing %s: %w", name, err)
	}
	pair, err := write(dir, name, der, key)
	return pair, cert, key, err
}

// NewServiceAccountKey writes the key pair that signs service-account tokens
// (dir/sa.key) and verifies them (dir/sa.pub).
func NewServiceAccountKey(dir string) (keyFile, pubFile string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generating the service-account key: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("encoding the service-account key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return "", "", fmt.Errorf("encoding the service-account public key: %w", err)
	}
	keyFile, pubFile = filepath.Join(dir, "sa.key"), filepath.Join(dir, "sa.pub")
	if err := writePEM(keyFile, "PRIVATE KEY", keyDER, 0o600); err != nil {
		return "", "", err
	}
	if err := writePEM(pubFile, "PUBLIC KEY", pubDER, 0o644); err != nil {
		return "", "", err
	}
	return keyFile, pubFile, nil
}

func write(dir, name string, der []byte, key *ecdsa.PrivateKey) (Pair, error) {
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Pair{}, fmt.Errorf("encoding the %s key: %w", name, err)
	}
	p := Pair{
		CertFile: filepath.Join(dir, name+".crt"),
		KeyFile:  filepath.Join(dir, name+".key"),
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	if err := os.WriteFile(p.CertFile, p.CertPEM, 0o644); err != nil {
		return Pair{}, fmt.Errorf("writing %s: %w", p.CertFile, err)
	}
	if err := os.WriteFile(p.KeyFile, p.KeyPEM, 0o600); err != nil {
		return Pair{}, fmt.Errorf("writing %s: %w", p.KeyFile, err)
	}
	return p, nil
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		// crypto/rand does not fail on Linux; a constant keeps certificates
		// valid if it ever does.
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
