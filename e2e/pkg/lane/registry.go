package lane

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// ServeRegistry starts an image registry in this process, as a user's own
// registry on their network: plain HTTP, on the host's end of the nodes'
// links only, trusted by every node's containerd the way a user trusts one
// (a hosts.toml naming it as an HTTP server). It returns the registry's
// host:port; it stops with the lane.
func (l *Lane) ServeRegistry() (string, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(hostIP, "0"))
	if err != nil {
		return "", fmt.Errorf("listening for the lane's registry: %w", err)
	}
	host := ln.Addr().String()
	for _, n := range l.nodes {
		if err := trustPlainHTTP(n.dir, host); err != nil {
			ln.Close()
			return "", err
		}
	}
	logFile, err := os.Create(filepath.Join(l.Dir, "registry.log"))
	if err != nil {
		ln.Close()
		return "", fmt.Errorf("creating the registry's log: %w", err)
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(logFile, "", log.LstdFlags))),
		ReadHeaderTimeout: 10 * time.Second,
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(logFile, "serving:", err)
		}
	}()
	l.stops = append(l.stops, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := srv.Shutdown(ctx)
		<-done
		return errors.Join(err, logFile.Close())
	})
	return host, nil
}

// trustPlainHTTP writes the containerd hosts.toml that makes the node under
// nodeDir pull from host over plain HTTP.
func trustPlainHTTP(nodeDir, host string) error {
	dir := filepath.Join(nodeDir, "containerd", "certs.d", host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("trusting the registry %s: %w", host, err)
	}
	hosts := fmt.Sprintf("server = \"http://%[1]s\"\n\n[host.\"http://%[1]s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", host)
	if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(hosts), 0o644); err != nil {
		return fmt.Errorf("trusting the registry %s: %w", host, err)
	}
	return nil
}
