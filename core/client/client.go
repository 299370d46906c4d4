package client

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/klog/v2"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/certs"
	"github.com/ballast-sched/ballast/core/usage"
)

// Defaults of Config.
const (
	DefaultInterval   = 5 * time.Second
	DefaultTimeout    = 5 * time.Second
	DefaultStaleAfter = 90 * time.Second
	DefaultMaxBackoff = time.Minute
	// maxErrorBody bounds how much of an error answer is read for its message.
	maxErrorBody = 4 << 10
	// maxLoggedNodes bounds the nodes named in the log per refresh when the
	// refusal of their data starts or ends.
	maxLoggedNodes = 10
)

// Config configures a Client.
type Config struct {
	// Address is the load-watcher base URL, e.g. http://ballast-load-watcher:2020. Required.
	Address string
	// Interval is the time between refreshes; defaults to DefaultInterval.
	Interval time.Duration
	// Timeout bounds each request; defaults to DefaultTimeout.
	Timeout time.Duration
	// StaleAfter is the caller's threshold: a node whose newest sample is
	// older is marked Stale. Defaults to DefaultStaleAfter.
	StaleAfter time.Duration
	// MaxBackoff caps the wait between failing refreshes; defaults to DefaultMaxBackoff.
	MaxBackoff time.Duration
	// CAFile is a PEM CA bundle that must have signed the certificate of an
	// https Address (read once, by New); empty means the system roots. Only
	// with an https Address and without HTTPClient.
	CAFile string
	// HTTPClient sends the requests; a fresh one when nil.
	HTTPClient *http.Client
	// MaxResponseBytes bounds an answer; a larger one is refused. Defaults
	// to DefaultMaxResponseBytes.
	MaxResponseBytes int64
	// MaxClockSkew is how far in the future a timestamp may lie; defaults
	// to DefaultMaxClockSkew.
	MaxClockSkew time.Duration
	// NodeExists, when set, is asked about every node in an answer: nodes
	// it does not know are left out of the snapshot. A caller with a node
	// lister plugs it in; it must answer true while it cannot tell yet.
	NodeExists func(name string) bool
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// SetDefaults fills unset fields.
func (c *Config) SetDefaults() {
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.StaleAfter == 0 {
		c.StaleAfter = DefaultStaleAfter
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.MaxClockSkew == 0 {
		c.MaxClockSkew = DefaultMaxClockSkew
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every invalid field at once.
func (c *Config) Validate(path *field.Path) error {
	var errs field.ErrorList
	if u, err := url.Parse(c.Address); c.Address == "" {
		errs = append(errs, field.Required(path.Child("address"), "the load-watcher URL"))
	} else if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs = append(errs, field.Invalid(path.Child("address"), c.Address, "must be an http:// or https:// URL with a host"))
	}
	if c.CAFile != "" {
		if !strings.HasPrefix(c.Address, "https://") {
			errs = append(errs, field.Invalid(path.Child("caFile"), c.CAFile, "only with an https:// address"))
		}
		if c.HTTPClient != nil {
			errs = append(errs, field.Invalid(path.Child("caFile"), c.CAFile, "set the CA on HTTPClient instead"))
		}
	}
	for name, d := range map[string]time.Duration{"interval": c.Interval, "timeout": c.Timeout, "staleAfter": c.StaleAfter, "maxBackoff": c.MaxBackoff, "maxClockSkew": c.MaxClockSkew} {
		if d <= 0 {
			errs = append(errs, field.Invalid(path.Child(name), d.String(), "must be positive"))
		}
	}
	if c.MaxResponseBytes <= 0 {
		errs = append(errs, field.Invalid(path.Child("maxResponseBytes"), c.MaxResponseBytes, "must be positive"))
	}
	return errs.ToAggregate()
}

// httpClient returns HTTPClient, or one trusting CAFile.
func (c *Config) httpClient() (*http.Client, error) {
	if c.HTTPClient != nil {
		return c.HTTPClient, nil
	}
	if c.CAFile == "" {
		return &http.Client{}, nil
	}
	pool, err := certs.Pool(c.CAFile, "load-watcher CA file")
	if err != nil {
		return nil, err
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: pool}
	return &http.Client{Transport: t}, nil
}

// Client keeps a cached usage snapshot from a load-watcher server fresh in
// the background. It is safe for concurrent use.
type Client struct {
	cfg     Config
	http    *http.Client
	url     string
	verify  verifier
	cache   staleCache
	mu      sync.Mutex
	lastOK  time.Time
	lastErr error
	// etag is the entity tag of the answer the cache holds: asked with it,
	// load-watcher answers 304 Not Modified until its next round, and the
	// cache, its snapshot and what callers built on it stay as they are.
	etag string
	// refused maps the nodes of the latest answer whose data was refused
	// (invalid or dropped) to why, to log only changes.
	refused map[string]string
	fails   atomic.Int32
}

// New validates cfg and returns a Client; call Run to start refreshing.
func New(cfg Config) (*Client, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(field.NewPath("client")); err != nil {
		return nil, err
	}
	hc, err := cfg.httpClient()
	if err != nil {
		return nil, fmt.Errorf("client.caFile: %w", err)
	}
	return &Client{
		cfg:    cfg,
		http:   hc,
		url:    strings.TrimSuffix(cfg.Address, "/") + apiv1.Path,
		verify: verifier{maxBytes: cfg.MaxResponseBytes, maxSkew: cfg.MaxClockSkew, nodeExists: cfg.NodeExists},
		cache:  staleCache{staleAfter: cfg.StaleAfter, now: cfg.Now},
	}, nil
}

// Run refreshes until ctx ends: every Interval while the server answers,
// with capped exponential backoff and jitter while it does not.
func (c *Client) Run(ctx context.Context) {
	for {
		wait := c.cfg.Interval
		if err := c.Refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			n := c.fails.Add(1)
			wait = backoff(c.cfg.Interval, c.cfg.MaxBackoff, int(n))
			if errors.Is(err, ErrRefused) {
				klog.InfoS("Refusing load-watcher's answer; keeping the cached snapshot until it turns stale", "err", err, "retryIn", wait)
			} else {
				klog.V(2).InfoS("Refreshing load-watcher usage failed; keeping the cached snapshot", "err", err, "retryIn", wait)
			}
		} else {
			c.fails.Store(0)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// backoff doubles base per consecutive failure up to limit, with ±10 % jitter.
func backoff(base, limit time.Duration, failures int) time.Duration {
	d := base
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	d = min(d, limit)
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}

// Refresh fetches the usage once. An answer refused as a whole (its error
// wraps ErrRefused) leaves the cached snapshot as a failed request does;
// nodes whose data is refused are marked stale, with the reason in
// usage.NodeUsage.Invalid.
func (c *Client) Refresh(ctx context.Context) error {
	c.mu.Lock()
	etag := c.etag
	c.mu.Unlock()
	a, err := c.fetch(ctx, etag)
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.lastErr = err
		return err
	}
	c.lastErr = nil
	c.lastOK = now
	if a == nil {
		return nil // not modified: the cache holds the answer
	}
	c.cache.store(a.list, a.invalid, now)
	c.etag = a.etag
	c.logRefused(a)
	return nil
}

// logRefused logs the nodes whose data started or stopped being refused.
func (c *Client) logRefused(a *answer) {
	now := make(map[string]string, len(a.invalid)+len(a.dropped))
	for name, why := range a.invalid {
		now[name] = why
	}
	for name, why := range a.dropped {
		now[name] = why
	}
	logged, more := 0, 0
	for name, why := range now {
		if c.refused[name] == why {
			continue
		}
		if logged++; logged > maxLoggedNodes {
			more++
			continue
		}
		if _, ok := a.invalid[name]; ok {
			klog.InfoS("Refusing load-watcher's usage of a node; treating it as stale", "node", name, "reason", why)
		} else {
			klog.InfoS("Ignoring a node in load-watcher's answer", "node", name, "reason", why)
		}
	}
	for name := range c.refused {
		if _, ok := now[name]; !ok {
			klog.V(2).InfoS("Accepting load-watcher's usage of a node again", "node", name)
		}
	}
	if more > 0 {
		klog.InfoS("Refusing load-watcher's usage of more nodes", "nodes", more)
	}
	c.refused = now
}

// fetch asks for the usage; with etag, the tag of the answer the cache
// holds, it returns nil when that answer is still current.
func (c *Client) fetch(ctx context.Context, etag string) (*answer, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified && etag != "" {
		return nil, nil
	}
	if resp.StatusCode != http.StatusOK {
		var e struct{ Message string }
		_ = json.NewDecoder(io.LimitReader(resp.Body, maxErrorBody)).Decode(&e)
		return nil, fmt.Errorf("GET %s: %s: %s", c.url, resp.Status, e.Message)
	}
	a, err := c.verify.decode(resp.Body, c.cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", c.url, err)
	}
	a.etag = resp.Header.Get("ETag")
	return a, nil
}

// Fetch asks a load-watcher server once, for callers that need one answer
// rather than a snapshot kept fresh (`ballast status`): cfg is checked as
// New checks it, the answer as Refresh checks it, and each node's Stale flag
// is judged against cfg.StaleAfter when the answer arrives.
func Fetch(ctx context.Context, cfg Config) (*usage.Snapshot, error) {
	c, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if err := c.Refresh(ctx); err != nil {
		return nil, err
	}
	return c.Snapshot(), nil
}

// Snapshot returns the latest usage with Stale evaluated now against the
// configured threshold; nil before the first successful refresh. It never
// blocks on the network. Treat the result as read-only.
func (c *Client) Snapshot() *usage.Snapshot { return c.cache.snapshot() }

// Age is the time since the last successful refresh, and false before it.
func (c *Client) Age() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastOK.IsZero() {
		return 0, false
	}
	return c.cfg.Now().Sub(c.lastOK), true
}

// LastError is the error of the latest refresh, nil when it succeeded.
func (c *Client) LastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// ErrNoSnapshot is returned by WaitForSnapshot when ctx ends first.
var ErrNoSnapshot = errors.New("no usage snapshot received from load-watcher")

// snapshotter is what WaitForSnapshot waits on: a Client or an
// inprocess.Client.
type snapshotter interface {
	Snapshot() *usage.Snapshot
}

// WaitForSnapshot blocks until s has a snapshot or ctx ends, for callers
// that would rather start with data than fall back at first.
func WaitForSnapshot(ctx context.Context, s snapshotter) (*usage.Snapshot, error) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if snap := s.Snapshot(); snap != nil {
			return snap, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrNoSnapshot, ctx.Err())
		case <-tick.C:
		}
	}
}
