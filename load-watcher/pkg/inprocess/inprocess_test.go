package inprocess

import (
	"context"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

func TestTwoInOneProcess(t *testing.T) {
	// Two in-process collectors in one process, each with its own source
	// and registry: no clash, independent data.
	a, b := static.New(), static.New()
	a.Set("n", 10, 10)
	b.Set("n", 90, 90)
	ipA, err := New(Config{Source: a, Nodes: a, Period: 20 * time.Millisecond, Windows: []usage.Window{usage.Window1m}})
	if err != nil {
		t.Fatal(err)
	}
	ipB, err := New(Config{Source: b, Nodes: b, Period: 20 * time.Millisecond, Windows: []usage.Window{usage.Window1m}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _ = ipA.Run(ctx) }()
	go func() { _ = ipB.Run(ctx) }()
	for _, tc := range []struct {
		ip   *Client
		want float64
	}{{ipA, 10}, {ipB, 90}} {
		snap, err := client.WaitForSnapshot(ctx, tc.ip)
		if err != nil {
			t.Fatal(err)
		}
		if got := snap.Nodes["n"].Windows[usage.Window1m][usage.CPU].Latest; got != tc.want {
			t.Errorf("cpu = %v, want %v", got, tc.want)
		}
	}
	if _, err := New(Config{Provider: "nonsense"}); err == nil {
		t.Errorf("unknown provider: want error")
	}
	if _, err := New(Config{Source: a}); err == nil {
		t.Errorf("no nodes and no cluster: want error")
	}
}
