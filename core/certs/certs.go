// Package certs loads the PEM files load-watcher's TLS settings name: CA
// bundles trusted by its clients and the serving key pair, reloaded when the
// files change (a rotated Secret).
package certs

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"sync"
	"time"
)

// Pool reads a PEM CA bundle; what describes the file in errors ("Prometheus
// CA file").
func Pool(file, what string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("no PEM certificate in %s %s", what, file)
	}
	return pool, nil
}

// KeyPair serves a certificate and key from two files and reloads them
// when either file changes, so a rotated Secret takes effect without a
// restart. A pair that fails to load keeps the previous one in use.
type KeyPair struct {
	certFile, keyFile string

	mu      sync.Mutex
	cert    *tls.Certificate
	version [2]fileVersion
	onError func(error)
}

type fileVersion struct {
	mod  time.Time
	size int64
}

// NewKeyPair loads the pair once; an error names the files. onError, when
// not nil, hears about failed reloads.
func NewKeyPair(certFile, keyFile string, onError func(error)) (*KeyPair, error) {
	k := &KeyPair{certFile: certFile, keyFile: keyFile, onError: onError}
	if err := k.load(); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *KeyPair) load() error {
	v, err := k.versions()
	if err != nil {
		return err
	}
	k.version = v
	cert, err := tls.LoadX509KeyPair(k.certFile, k.keyFile)
	if err != nil {
		return fmt.Errorf("loading the TLS key pair %s, %s: %w", k.certFile, k.keyFile, err)
	}
	k.cert = &cert
	return nil
}

func (k *KeyPair) versions() ([2]fileVersion, error) {
	var v [2]fileVersion
	for i, f := range []string{k.certFile, k.keyFile} {
		st, err := os.Stat(f)
		if err != nil {
			return v, fmt.Errorf("reading TLS file: %w", err)
		}
		v[i] = fileVersion{mod: st.ModTime(), size: st.Size()}
	}
	return v, nil
}

// GetCertificate is tls.Config.GetCertificate: the current pair, reloaded
// first if a file changed since it was last read. A failed reload is
// reported once per change of the files, and the previous pair stays.
func (k *KeyPair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, err := k.versions()
	if err == nil && v == k.version {
		return k.cert, nil
	}
	if err == nil {
		err = k.load()
	}
	if err != nil && k.onError != nil {
		k.onError(err)
	}
	return k.cert, nil
}

// ServerConfig is a TLS 1.2+ server configuration serving k's pair.
func (k *KeyPair) ServerConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: k.GetCertificate}
}
