package prometheus

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/ballast-sched/ballast/core/certs"
)

// newTransport builds the HTTP transport for the TLS and token settings.
func newTransport(cfg Config) (http.RoundTripper, error) {
	base := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.CAFile != "" || cfg.InsecureSkipVerify {
		tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: cfg.InsecureSkipVerify} //nolint:gosec // opt-in by flag
		if cfg.CAFile != "" {
			pool, err := certs.Pool(cfg.CAFile, "Prometheus CA file")
			if err != nil {
				return nil, err
			}
			tlsCfg.RootCAs = pool
		}
		base.TLSClientConfig = tlsCfg
	}
	if cfg.BearerTokenFile == "" {
		return base, nil
	}
	if _, err := readToken(cfg.BearerTokenFile); err != nil {
		return nil, err
	}
	return &bearerFromFile{file: cfg.BearerTokenFile, next: base}, nil
}

// bearerFromFile reads the token on every request, so a rotated
// service-account token is picked up without a restart.
type bearerFromFile struct {
	file string
	next http.RoundTripper
}

func (b *bearerFromFile) RoundTrip(req *http.Request) (*http.Response, error) {
	token, err := readToken(b.file)
	if err != nil {
		return nil, err
	}
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+token)
	return b.next.RoundTrip(req)
}

func readToken(file string) (string, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("reading Prometheus bearer token file: %w", err)
	}
	token := strings.TrimSpace(string(raw))
	if token == "" {
		return "", fmt.Errorf("Prometheus bearer token file %s is empty", file)
	}
	return token, nil
}
