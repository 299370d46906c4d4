package cluster

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// etcdReadyTimeout bounds how long an embedded etcd may take to elect itself.
const etcdReadyTimeout = 30 * time.Second

// etcdPortAttempts bounds the retries when another process takes a port
// between our probe and etcd's bind (parallel test binaries do).
const etcdPortAttempts = 5

// StartEtcd starts a single-member etcd on free loopback ports with its data
// in dir, retrying with new ports when one was taken meanwhile.
func StartEtcd(dir string) (*embed.Etcd, string, error) {
	var err error
	for range etcdPortAttempts {
		var e *embed.Etcd
		var url string
		e, url, err = startEtcdOnce(dir)
		if err == nil {
			return e, url, nil
		}
		if !isAddrInUse(err) {
			return nil, "", err
		}
		if rmErr := os.RemoveAll(dir); rmErr != nil {
			return nil, "", fmt.Errorf("clearing etcd data dir after a port clash: %w", rmErr)
		}
	}
	return nil, "", err
}

// startEtcdOnce starts etcd on ports that were free a moment ago. fsync is
// off: the data dies with the cluster, and fsync is what makes etcd slow on
// small disks.
func startEtcdOnce(dir string) (*embed.Etcd, string, error) {
	clientURL, err := freeLoopbackURL()
	if err != nil {
		return nil, "", err
	}
	peerURL, err := freeLoopbackURL()
	if err != nil {
		return nil, "", err
	}
	e, err := startEtcdOn(dir, clientURL, peerURL)
	if err != nil {
		return nil, "", err
	}
	return e, clientURL.String(), nil
}

// startEtcdOn starts etcd serving clients on clientURL and peers on peerURL.
func startEtcdOn(dir string, clientURL, peerURL *url.URL) (*embed.Etcd, error) {

	cfg := embed.NewConfig()
	cfg.Name = "ballast"
	cfg.Dir = dir
	cfg.UnsafeNoFsync = true
	// etcd logs ordinary shutdown as errors; its real failures surface
	// through Err and ReadyNotify below.
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.ListenClientUrls = []url.URL{*clientURL}
	cfg.AdvertiseClientUrls = []url.URL{*clientURL}
	cfg.ListenPeerUrls = []url.URL{*peerURL}
	cfg.AdvertisePeerUrls = []url.URL{*peerURL}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", cfg.Name, peerURL.String())
	cfg.ListenMetricsUrls = nil

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("starting embedded etcd: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("embedded etcd failed: %w", err)
	case <-time.After(etcdReadyTimeout):
		e.Close()
		return nil, fmt.Errorf("embedded etcd not ready after %s", etcdReadyTimeout)
	}
	return e, nil
}

// isAddrInUse tells a port clash apart from other start failures; etcd does
// not always wrap the listener's error, so the message is checked too.
func isAddrInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// freeLoopbackURL returns an http URL on 127.0.0.1 with a port that was free
// a moment ago.
func freeLoopbackURL() (*url.URL, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("finding a free loopback port: %w", err)
	}
	defer l.Close()
	return &url.URL{Scheme: "http", Host: l.Addr().String()}, nil
}
