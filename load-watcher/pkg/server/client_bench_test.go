package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
	"github.com/ballast-sched/ballast/load-watcher/pkg/server"
)

// BenchmarkClientRefresh measures what one refresh of the Go client costs
// the scheduler or the descheduler at 5 000 nodes: after a new round (the
// whole answer decoded and verified), and between two rounds (304 Not
// Modified). With the chart's 15 s rounds and the client's 5 s interval,
// two refreshes in three are of the second kind. The server's encoding of
// a new round happens outside the timed part.
func BenchmarkClientRefresh(b *testing.B) {
	for _, newRound := range []bool{true, false} {
		name := "unchanged"
		if newRound {
			name = "new-round"
		}
		b.Run("nodes=5000/"+name, func(b *testing.B) {
			ctx := context.Background()
			clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
			p := static.New(static.WithClock(clk.Now))
			for i := range 5000 {
				p.Set(fmt.Sprintf("node-%05d", i), float64(i%100), float64((i*7)%100))
			}
			col, err := collector.New(collector.Config{Provider: p, Nodes: p, Period: 15 * time.Second, Now: clk.Now})
			if err != nil {
				b.Fatal(err)
			}
			srv := httptest.NewServer(server.NewHandler(server.Options{Source: col, Now: clk.Now}))
			defer srv.Close()
			c, err := client.New(client.Config{Address: srv.URL, StaleAfter: time.Hour, Now: clk.Now})
			if err != nil {
				b.Fatal(err)
			}
			round := func() {
				clk.Step(15 * time.Second)
				if err := col.Collect(ctx); err != nil {
					b.Fatal(err)
				}
				resp, err := http.Get(srv.URL + "/api/v1/usage") // the server encodes the round
				if err != nil {
					b.Fatal(err)
				}
				_ = resp.Body.Close()
			}
			round()
			if err := c.Refresh(ctx); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if newRound {
					b.StopTimer()
					round()
					b.StartTimer()
				}
				if err := c.Refresh(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
