package client

import (
	"context"
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

	apiv1 "github.com/ballast-sched/ballast/load-watcher/pkg/api/v1"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

// Defaults of Config.
const (
	DefaultInterval   = 5 * time.Second
	DefaultTimeout    = 5 * time.Second
	DefaultStaleAfter = 90 * time.Second
	DefaultMaxBackoff = time.Minute
	// maxBody bounds a response; 5 000 nodes take about 4 MiB.
	maxBody = 64 << 20
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
	// HTTPClient sends the requests; a fresh one when nil.
	HTTPClient *http.Client
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
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
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
	for name, d := range map[string]time.Duration{"interval": c.Interval, "timeout": c.Timeout, "staleAfter": c.StaleAfter, "maxBackoff": c.MaxBackoff} {
		if d <= 0 {
			errs = append(errs, field.Invalid(path.Child(name), d.String(), "must be positive"))
		}
	}
	return errs.ToAggregate()
}

// Client keeps a cached usage snapshot from a load-watcher server fresh in
// the background. It is safe for concurrent use.
type Client struct {
	cfg     Config
	url     string
	cache   staleCache
	mu      sync.Mutex
	lastOK  time.Time
	lastErr error
	fails   atomic.Int32
}

// New validates cfg and returns a Client; call Run to start refreshing.
func New(cfg Config) (*Client, error) {
	cfg.SetDefaults()
	if err := cfg.Validate(field.NewPath("client")); err != nil {
		return nil, err
	}
	return &Client{
		cfg:   cfg,
		url:   strings.TrimSuffix(cfg.Address, "/") + apiv1.Path,
		cache: staleCache{staleAfter: cfg.StaleAfter, now: cfg.Now},
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
			klog.V(2).InfoS("Refreshing load-watcher usage failed; keeping the cached snapshot", "err", err, "retryIn", wait)
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

// Refresh fetches the usage once.
func (c *Client) Refresh(ctx context.Context) error {
	list, err := c.fetch(ctx)
	now := c.cfg.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.lastErr = err
		return err
	}
	c.lastErr = nil
	c.lastOK = now
	c.cache.store(list, now)
	return nil
}

func (c *Client) fetch(ctx context.Context) (*apiv1.UsageList, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", c.url, err)
	}
	defer resp.Body.Close()
	body := io.LimitReader(resp.Body, maxBody)
	if resp.StatusCode != http.StatusOK {
		var e struct{ Message string }
		_ = json.NewDecoder(body).Decode(&e)
		return nil, fmt.Errorf("GET %s: %s: %s", c.url, resp.Status, e.Message)
	}
	var list apiv1.UsageList
	if err := json.NewDecoder(body).Decode(&list); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", c.url, err)
	}
	if list.APIVersion != apiv1.APIVersion {
		return nil, fmt.Errorf("%s answered apiVersion %q, want %q", c.url, list.APIVersion, apiv1.APIVersion)
	}
	return &list, nil
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

// snapshotter is what WaitForSnapshot waits on: a Client or an InProcess.
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
