package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkServeRSS runs the whole command in this process with 5 000
// static nodes, holding full buffers, and reports the process's resident
// set (VmRSS) and its peak (VmHWM) after serving both data endpoints.
//
// To get full buffers in seconds, the period is 100ms and the windows
// 400ms/2s/6s: the same 62 points per node and 3 windows as 1m/5m/15m at
// the default 15 s period, so the memory held is the same as after 15
// minutes in production.
func BenchmarkServeRSS(b *testing.B) {
	entries := make([]string, 5000)
	for i := range entries {
		entries[i] = fmt.Sprintf("node-%05d=%d:%d", i, i%100, (i*7)%100)
	}
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		addrc := make(chan string, 1)
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, []string{
				"--provider=static", "--static-usage=" + strings.Join(entries, ","),
				"--listen-address=127.0.0.1:0", "--period=100ms", "--windows=400ms,2s,6s", "--stale-after=1m", "-v=0",
			}, io.Discard, func(addr string) { addrc <- addr })
		}()
		addr := <-addrc
		time.Sleep(6500 * time.Millisecond) // 65 rounds: buffers full
		for _, path := range []string{"/watcher", "/api/v1/usage", "/watcher", "/api/v1/usage"} {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				b.Fatal(err)
			}
			n, _ := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK || n < 1<<20 {
				b.Fatalf("%s: status %d, %d bytes", path, resp.StatusCode, n)
			}
		}
		b.ReportMetric(float64(procStatus("VmRSS:"))/(1<<20), "rss-MiB")
		b.ReportMetric(float64(procStatus("VmHWM:"))/(1<<20), "peak-rss-MiB")
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
}

// procStatus reads a kB field of /proc/self/status, in bytes.
func procStatus(field string) int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == field {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
