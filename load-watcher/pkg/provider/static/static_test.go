package static

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

func TestStatic(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := New(WithClock(func() time.Time { return at }))
	p.Set("b", 20, 30)
	p.SetCPU("a", 70)
	p.Set("gone", 1, 1)
	p.Remove("gone")

	nodes, _ := p.Nodes()
	if diff := cmp.Diff([]provider.Node{{Name: "a"}, {Name: "b"}}, nodes); diff != "" {
		t.Errorf("Nodes (-want,+got):\n%s", diff)
	}
	got, err := p.Sample(context.Background(), []provider.Node{{Name: "a"}, {Name: "b"}, {Name: "unset"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Sample{
		{Node: "a", Time: at, CPU: 70, HasCPU: true},
		{Node: "b", Time: at, CPU: 20, Memory: 30, HasCPU: true, HasMemory: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sample (-want,+got):\n%s", diff)
	}

	outage := errors.New("down")
	p.SetError(outage)
	if _, err := p.Sample(context.Background(), nodes); !errors.Is(err, outage) {
		t.Errorf("Sample during outage: err = %v, want %v", err, outage)
	}
}
