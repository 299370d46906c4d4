package prometheus

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// bigVector is an answer of n series for nodes no one has, about 70 bytes
// each.
func bigVector(n int) []byte {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"metric":{"instance":"10.%d.%d.%d:9100"},"value":[1767225600,"0.5"]}`, i>>16&255, i>>8&255, i&255)
	}
	return []byte(vector(b.String()))
}

// An answer larger than MaxResponseBytes fails its query, whether its size
// is declared, streamed without end or hidden by compression; the other
// resource's query still counts.
func TestAnswerLargerThanTheLimitFailsTheQuery(t *testing.T) {
	const limit = 64 << 10
	big := bigVector(4000) // ~280 KiB
	small := []byte(vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"0.5"]}`))
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write(big)
	_ = zw.Close()

	tests := []struct {
		name  string
		serve func(w http.ResponseWriter, r *http.Request)
	}{
		{name: "declared length", serve: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			_, _ = w.Write(big)
		}},
		{name: "streamed without end", serve: func(w http.ResponseWriter, r *http.Request) {
			// What a misbehaving proxy could send: the 128 MiB container
			// would run out of memory long before the query's timeout.
			_, _ = w.Write(big[:len(big)/2])
			chunk := bytes.Repeat([]byte(`{"metric":{},"value":[1,"1"]},`), 1024)
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}},
		{name: "compressed", serve: func(w http.ResponseWriter, _ *http.Request) {
			// ~10 KiB on the wire, ~280 KiB once decompressed.
			w.Header().Set("Content-Encoding", "gzip")
			_, _ = w.Write(zipped.Bytes())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				w.Header().Set("Content-Type", "application/json")
				if r.Form.Get("query") == "mem" {
					_, _ = w.Write(small)
					return
				}
				tt.serve(w, r)
			}))
			defer srv.Close()
			p, err := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "cpu", MemoryQuery: "mem",
				MaxResponseBytes: limit, Timeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			got, err := p.Sample(context.Background(), testNodes)
			if !errors.Is(err, ErrResponseTooLarge) || !strings.Contains(err.Error(), "cpu query") {
				t.Fatalf("Sample error = %v, want the CPU query failed with ErrResponseTooLarge", err)
			}
			t.Logf("%v", err)
			if elapsed := time.Since(start); elapsed > 10*time.Second {
				t.Errorf("Sample took %s: the answer was read past the limit", elapsed)
			}
			if len(got) != 1 || got[0].Node != "agent-1" || got[0].HasCPU || !got[0].HasMemory {
				t.Errorf("Sample = %+v, want agent-1's memory alone", got)
			}
		})
	}
}

// An answer of exactly MaxResponseBytes is read.
func TestAnswerOfTheLimitIsRead(t *testing.T) {
	body := []byte(vector(`{"metric":{"node":"agent-1"},"value":[1767225600,"0.5"]}`))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	p, err := New(Config{Address: srv.URL, QuerySet: QuerySetNodeExporter, CPUQuery: "q", MemoryQuery: "q",
		MaxResponseBytes: int64(len(body))})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := p.Sample(context.Background(), testNodes); err != nil || len(got) != 1 {
		t.Errorf("Sample = %+v, %v; want agent-1", got, err)
	}
}

// A Prometheus that stalls holds a round for twice the query timeout, not
// for every query's timeout in turn: with auto detection a round has up to
// four queries to try, and the ones left when the round's deadline passes
// are not sent.
func TestRoundEndsAtItsDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	for _, tt := range []struct {
		name  string
		stall func(w http.ResponseWriter)
	}{
		{name: "no answer", stall: func(http.ResponseWriter) {}},
		{name: "answer that stops halfway", stall: func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[`))
			w.(http.Flusher).Flush()
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			var mu sync.Mutex
			var queries []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				_ = r.ParseForm()
				mu.Lock()
				queries = append(queries, r.Form.Get("query"))
				mu.Unlock()
				tt.stall(w)
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}))
			defer srv.Close()
			defer close(release)
			p, err := New(Config{Address: srv.URL, QuerySet: QuerySetAuto, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err = p.Sample(context.Background(), testNodes)
			elapsed := time.Since(start)
			t.Logf("%v", err)
			if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "round's deadline (600ms") {
				t.Errorf("Sample error = %v, want the round's deadline", err)
			}
			mu.Lock()
			defer mu.Unlock()
			// The CPU query of kube-prometheus times out at 300ms,
			// node-exporter's at the round's deadline, 600ms; memory is not
			// asked.
			if len(queries) > 2 {
				t.Errorf("queries sent = %q, want at most the two that fit in the round", queries)
			}
			if elapsed > 10*timeout {
				t.Errorf("the round took %s, want about %s", elapsed, 2*timeout)
			}
		})
	}
}
