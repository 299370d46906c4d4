package client

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRefreshRejectsForeignResponses(t *testing.T) {
	for name, body := range map[string]string{
		"wrong apiVersion": `{"apiVersion":"other/v9","nodes":{}}`,
		"not JSON":         `<html>`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
		c, _ := New(Config{Address: srv.URL})
		if err := c.Refresh(context.Background()); err == nil {
			t.Errorf("%s: want error", name)
		}
		if c.Snapshot() != nil {
			t.Errorf("%s: want no snapshot", name)
		}
		srv.Close()
	}
}

func TestRefreshTimesOut(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	c, _ := New(Config{Address: srv.URL, Timeout: 50 * time.Millisecond})
	if err := c.Refresh(context.Background()); err == nil || !strings.Contains(err.Error(), "deadline") {
		t.Errorf("Refresh against a hung server: err = %v, want a deadline error", err)
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		failures int
		want     time.Duration // before ±10 % jitter
	}{
		{failures: 1, want: 5 * time.Second},
		{failures: 2, want: 10 * time.Second},
		{failures: 4, want: 40 * time.Second},
		{failures: 5, want: time.Minute}, // 80s capped
		{failures: 50, want: time.Minute},
	}
	for _, tt := range tests {
		got := backoff(5*time.Second, time.Minute, tt.failures)
		if lo, hi := time.Duration(0.9*float64(tt.want)), time.Duration(1.1*float64(tt.want)); got < lo || got > hi {
			t.Errorf("backoff after %d failures = %v, want %v ±10%%", tt.failures, got, tt.want)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	for name, cfg := range map[string]Config{
		"no address":       {},
		"no scheme":        {Address: "ballast-load-watcher:2020"},
		"negative timeout": {Address: "http://x:2020", Timeout: -time.Second},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}
