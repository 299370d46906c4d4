package main

import (
	"os"
	"syscall"
	"testing"
)

func TestWait(t *testing.T) {
	tests := []struct {
		name      string
		sigs      []os.Signal
		want      os.Signal
		wantReaps int
	}{
		{name: "SIGTERM", sigs: []os.Signal{syscall.SIGTERM}, want: syscall.SIGTERM},
		{name: "SIGINT", sigs: []os.Signal{syscall.SIGINT}, want: syscall.SIGINT},
		{
			name:      "reaps on every SIGCHLD before SIGTERM",
			sigs:      []os.Signal{syscall.SIGCHLD, syscall.SIGCHLD, syscall.SIGTERM, syscall.SIGCHLD},
			want:      syscall.SIGTERM,
			wantReaps: 2,
		},
		{name: "channel closed", sigs: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sigs := make(chan os.Signal, len(tt.sigs))
			for _, s := range tt.sigs {
				sigs <- s
			}
			close(sigs)
			reaps := 0
			got := wait(sigs, func() { reaps++ })
			if got != tt.want {
				t.Errorf("wait() = %v, want %v", got, tt.want)
			}
			if reaps != tt.wantReaps {
				t.Errorf("reaps = %d, want %d", reaps, tt.wantReaps)
			}
		})
	}
}
