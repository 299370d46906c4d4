// Package apiconnect keeps a component's connection to the API server through
// the server's restarts. It is an HTTPS proxy inside the process (client-go
// honours HTTPS_PROXY), listening on loopback, that opens the TCP connection
// for every request and leaves TLS end to end:
//
//   - A connection the server refuses is retried every RetryEvery until the
//     request gives up, instead of failing at once. client-go's informers back
//     off exponentially after every refused watch (0.8 s doubling, up to a
//     minute with jitter), so after a restart of some seconds they resume at
//     a random moment up to a minute after the server is back; through the
//     connector their request waits and resumes the moment it is.
//   - A pod reaches the API server through the kubernetes Service, which
//     kube-proxy routes to the server's address. A server that stops takes
//     itself out of the Service's endpoints; until kube-proxy, itself backing
//     off, has seen it come back, the Service leads nowhere. When it does, the
//     connector connects to the server's own address (its advertised address,
//     which the Service's endpoint names), with the same TLS: the server's
//     certificate names the Service's address.
package apiconnect

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Defaults of a Connector.
const (
	// DefaultRetryEvery is how often a refused connection is tried again.
	DefaultRetryEvery = 250 * time.Millisecond
	// DefaultMaxWait bounds how long one request waits for its server.
	DefaultMaxWait = 10 * time.Minute
	// dialTimeout bounds one attempt at one address.
	dialTimeout = 2 * time.Second
)

// Connector is the proxy. Its zero value is not usable; fill Service.
type Connector struct {
	// Service is host:port of the kubernetes Service, as a pod's
	// KUBERNETES_SERVICE_HOST and _PORT name it.
	Service string
	// Direct are the API server's own addresses (host:port), tried after
	// the Service when it cannot be reached.
	Direct []string
	// RetryEvery and MaxWait default to DefaultRetryEvery and
	// DefaultMaxWait.
	RetryEvery, MaxWait time.Duration
	// Dial opens one connection; net.Dialer's when nil.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Connect opens a connection to target, waiting while it cannot be reached:
// to the Service, or else to one of the server's own addresses.
func (c *Connector) Connect(ctx context.Context, target string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, or(c.MaxWait, DefaultMaxWait))
	defer cancel()
	addrs := []string{target}
	if target == c.Service {
		for _, d := range c.Direct {
			if !slices.Contains(addrs, d) {
				addrs = append(addrs, d)
			}
		}
	}
	dial := c.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	for {
		var errs []error
		for _, a := range addrs {
			actx, acancel := context.WithTimeout(ctx, dialTimeout)
			conn, err := dial(actx, "tcp", a)
			acancel()
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("connecting to %s: %w", target, errors.Join(append(errs, ctx.Err())...))
		case <-time.After(or(c.RetryEvery, DefaultRetryEvery)):
		}
	}
}

// ServeHTTP answers CONNECT requests: the tunnel is opened once the target
// is reached.
func (c *Connector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodConnect {
		http.Error(w, "only CONNECT", http.StatusMethodNotAllowed)
		return
	}
	upstream, err := c.Connect(r.Context(), r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "cannot tunnel", http.StatusInternalServerError)
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	if _, err := conn.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		conn.Close()
		upstream.Close()
		return
	}
	tunnel(conn, buf.Reader, upstream)
}

// tunnel copies both ways until either side ends, then closes both. in
// holds what the client sent after its CONNECT request.
func tunnel(client net.Conn, in *bufio.Reader, upstream net.Conn) {
	var once sync.Once
	closeBoth := func() {
		once.Do(func() {
			client.Close()
			upstream.Close()
		})
	}
	go func() {
		defer closeBoth()
		_, _ = io.Copy(upstream, in)
	}()
	defer closeBoth()
	_, _ = io.Copy(client, upstream)
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}
