package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
)

// BenchmarkServeRSS measures the resident memory of a load-watcher process
// (this test process, wired as Run wires the command) holding 15 minutes
// of samples for 5 000 nodes at the default period and windows, while it
// keeps sampling and serving:
//
//  1. fill: 61 rounds of 15 s on a fake clock (the buffers are then full);
//  2. steady state: the peak-RSS counter is reset, then 20 more rounds, each
//     followed by the warm-up and a request to /watcher and /api/v1/usage
//     over loopback HTTP.
//
// Reported: rss-MiB (VmRSS at the end), peak-rss-MiB (VmHWM during the
// steady state) and their anonymous and file-backed parts (RssAnon: the Go
// runtime's memory; RssFile: pages of this test binary, larger than those
// of the load-watcher binary), with the GC settings the process runs with
// (GOGC, GOMEMLIMIT).
func BenchmarkServeRSS(b *testing.B) {
	for i := 0; i < b.N; i++ {
		var mu sync.Mutex
		at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
		step := func() { mu.Lock(); at = at.Add(15 * time.Second); mu.Unlock() }

		p := static.New(static.WithClock(clock))
		for n := 0; n < 5000; n++ {
			p.Set(fmt.Sprintf("node-%05d", n), float64(n%100), float64((n*7)%100))
		}
		reg := prometheus.NewRegistry()
		col, err := collector.New(collector.Config{Provider: p, Nodes: p, Registerer: reg, Now: clock})
		if err != nil {
			b.Fatal(err)
		}
		h := server.NewHandler(server.Options{Source: col, Gatherer: reg, Now: clock})
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(lis) }()
		ctx, cancel := context.WithCancel(context.Background())
		go h.WarmLoop(ctx)

		round := func() {
			step()
			if err := col.Collect(ctx); err != nil {
				b.Fatal(err)
			}
		}
		for r := 0; r < 61; r++ {
			round()
		}
		runtime.GC()
		debug.FreeOSMemory()
		resetPeakRSS()
		for r := 0; r < 20; r++ {
			round()
			time.Sleep(300 * time.Millisecond) // warm-up runs, as it would between rounds
			for _, path := range []string{"/watcher", "/api/v1/usage"} {
				resp, err := http.Get("http://" + lis.Addr().String() + path)
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || n < 1<<20 {
					b.Fatalf("%s: status %d, %d bytes", path, resp.StatusCode, n)
				}
			}
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b.Logf("heapAlloc=%dMiB heapInuse=%dMiB heapSys=%dMiB released=%dMiB sys=%dMiB numGC=%d", ms.HeapAlloc>>20, ms.HeapInuse>>20, ms.HeapSys>>20, ms.HeapReleased>>20, ms.Sys>>20, ms.NumGC)
		b.ReportMetric(float64(procStatus("VmRSS:"))/(1<<20), "rss-MiB")
		b.ReportMetric(float64(procStatus("VmHWM:"))/(1<<20), "peak-rss-MiB")
		b.ReportMetric(float64(procStatus("RssAnon:"))/(1<<20), "anon-rss-MiB")
		b.ReportMetric(float64(procStatus("RssFile:"))/(1<<20), "file-rss-MiB")
		cancel()
		_ = srv.Close()
	}
}

// resetPeakRSS resets VmHWM to the current RSS (Linux clear_refs "5").
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0o200) }

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
