package cluster

import (
	"net"
	"net/url"
	"testing"
)

// TestStartEtcdRetriesATakenPort holds a port and checks that the error etcd
// returns for it is the one startEtcd retries on.
func TestStartEtcdRetriesATakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := &url.URL{Scheme: "http", Host: l.Addr().String()}
	free, err := freeLoopbackURL()
	if err != nil {
		t.Fatal(err)
	}
	_, err = startEtcdOn(t.TempDir(), taken, free)
	if err == nil || !isAddrInUse(err) {
		t.Fatalf("starting etcd on a taken port: err = %v, want address in use", err)
	}
	e, _, err := StartEtcd(t.TempDir())
	if err != nil {
		t.Fatalf("startEtcd: %v", err)
	}
	e.Close()
}
