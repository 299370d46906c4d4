package prometheus

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"

	"github.com/ballast-sched/ballast/core/certs"
)

// ErrResponseTooLarge is wrapped by the error of a query whose answer is
// larger than Config.MaxResponseBytes.
var ErrResponseTooLarge = errors.New("Prometheus answer too large")

// maxRedirects is how many redirects a query follows, as net/http's default.
const maxRedirects = 10

// newHTTPClient builds the HTTP client for a validated cfg: its transport,
// and a redirect policy that keeps the bearer token with cfg.Address.
func newHTTPClient(cfg Config) (*http.Client, error) {
	rt, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	origin, err := url.Parse(cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("parsing the Prometheus address: %w", err)
	}
	return &http.Client{Transport: rt, CheckRedirect: checkRedirect(origin, cfg.BearerTokenFile != "")}, nil
}

// checkRedirect follows no redirect from https to http, whose answer anyone
// on the way could forge, and with a bearer token none that leaves origin:
// the token is for that server alone.
func checkRedirect(origin *url.URL, withToken bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		from := via[len(via)-1].URL
		if from.Scheme == "https" && req.URL.Scheme != "https" {
			return fmt.Errorf("not following the redirect from %s to %s: it leaves https", originOf(from), originOf(req.URL))
		}
		if withToken && !sameOrigin(req.URL, origin) {
			return fmt.Errorf("not following the redirect to %s: the bearer token goes to %s only", originOf(req.URL), originOf(origin))
		}
		return nil
	}
}

// sameOrigin reports whether a and b name one server: scheme, host and
// port, the port defaulting to the scheme's.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// originOf is u's scheme and host, for messages: no path, query or user.
func originOf(u *url.URL) string { return u.Scheme + "://" + u.Host }

// newTransport builds the HTTP transport for the TLS, token and size
// settings.
func newTransport(cfg Config) (http.RoundTripper, error) {
	rt, err := newAuthTransport(cfg)
	if err != nil {
		return nil, err
	}
	return &capBody{max: cfg.MaxResponseBytes, next: rt}, nil
}

// newAuthTransport builds the transport for the TLS and token settings.
func newAuthTransport(cfg Config) (http.RoundTripper, error) {
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
	origin, err := url.Parse(cfg.Address)
	if err != nil {
		return nil, fmt.Errorf("parsing the Prometheus address: %w", err)
	}
	return &bearerFromFile{file: cfg.BearerTokenFile, origin: origin, next: base}, nil
}

// bearerFromFile reads the token on every request, so a rotated
// service-account token is picked up without a restart. It puts the token
// on requests to origin only, whatever sent them elsewhere.
type bearerFromFile struct {
	file   string
	origin *url.URL
	next   http.RoundTripper
}

func (b *bearerFromFile) RoundTrip(req *http.Request) (*http.Response, error) {
	if !sameOrigin(req.URL, b.origin) {
		return b.next.RoundTrip(req)
	}
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

// capBody fails an answer larger than max bytes instead of reading it whole:
// the Prometheus client keeps the entire answer in memory, and an endless or
// huge one would take the container's memory before the query's timeout.
// The body it sees is decompressed already, so a small compressed answer
// that unpacks to a huge one is caught too.
type capBody struct {
	max  int64
	next http.RoundTripper
}

func (c *capBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > c.max {
		_ = resp.Body.Close()
		return nil, tooLarge(c.max)
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, left: c.max, max: c.max}
	return resp, nil
}

func tooLarge(limit int64) error {
	return fmt.Errorf("%w: more than %d bytes (maxResponseBytes)", ErrResponseTooLarge, limit)
}

// cappedBody reads at most max bytes and fails on the byte after them.
type cappedBody struct {
	io.ReadCloser
	left, max int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells an answer of exactly max bytes from a larger one.
		var one [1]byte
		n, err := b.ReadCloser.Read(one[:])
		if n > 0 {
			return 0, tooLarge(b.max)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}
