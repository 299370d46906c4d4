package main

import (
	"context"
	"io"
	"log"
	"testing"
	"time"
)

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    options
		wantErr bool
	}{
		{
			name: "binary quantity",
			args: []string{"--memory", "1Gi"},
			want: options{memory: 1 << 30},
		},
		{
			name: "plain number is MiB",
			args: []string{"--memory", "512"},
			want: options{memory: 512 << 20}, // 512 * 1048576
		},
		{
			name: "decimal quantity with fraction, and a ramp",
			args: []string{"--memory=1.5G", "--ramp=30s"},
			want: options{memory: 1_500_000_000, ramp: 30 * time.Second},
		},
		{
			name: "quantity in bytes",
			args: []string{"-memory", "4096k"},
			want: options{memory: 4_096_000},
		},
		{name: "memory is required", args: []string{"--ramp", "1s"}, wantErr: true},
		{name: "zero MiB", args: []string{"--memory", "0"}, wantErr: true},
		{name: "negative MiB", args: []string{"--memory", "-1"}, wantErr: true},
		{name: "zero quantity", args: []string{"--memory", "0Gi"}, wantErr: true},
		{name: "fraction of a byte", args: []string{"--memory", "1m"}, wantErr: true},
		{name: "not a quantity", args: []string{"--memory", "lots"}, wantErr: true},
		{name: "MiB overflow", args: []string{"--memory", "9223372036854775807"}, wantErr: true},
		{name: "negative ramp", args: []string{"--memory", "1Gi", "--ramp", "-1s"}, wantErr: true},
		{name: "a run of 20s", args: []string{"--memory", "32Mi", "--for", "20s"}, want: options{memory: 32 << 20, run: 20 * time.Second}},
		{name: "negative run", args: []string{"--memory", "1Gi", "--for", "-1s"}, wantErr: true},
		{name: "bad ramp", args: []string{"--memory", "1Gi", "--ramp", "soon"}, wantErr: true},
		{name: "unknown flag", args: []string{"--memory", "1Gi", "--cpu", "1"}, wantErr: true},
		{name: "stray argument", args: []string{"--memory", "1Gi", "now"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseFlags(tt.args, io.Discard)
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseFlags(%q) error = %v, wantErr %v", tt.args, err, tt.wantErr)
			}
			if got != tt.want {
				t.Errorf("parseFlags(%q) = %+v, want %+v", tt.args, got, tt.want)
			}
		})
	}
}

func TestHold(t *testing.T) {
	tests := []struct {
		name       string
		memory     int64
		wantChunks int
	}{
		{name: "less than a chunk", memory: 3*4096 + 1, wantChunks: 1},
		{name: "exactly one chunk", memory: chunkSize, wantChunks: 1},
		{name: "a chunk and a bit", memory: chunkSize + 4096, wantChunks: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			held := hold(context.Background(), options{memory: tt.memory}, 4096, log.New(io.Discard, "", 0))
			if got := size(held); got != tt.memory {
				t.Errorf("holds %d bytes, want %d", got, tt.memory)
			}
			if len(held) != tt.wantChunks {
				t.Errorf("holds %d chunks, want %d", len(held), tt.wantChunks)
			}
			for c, b := range held {
				for i := 0; i < len(b); i += 4096 {
					if b[i] != 1 {
						t.Fatalf("chunk %d: page at %d not touched", c, i)
					}
				}
			}
		})
	}
}

func TestHoldStopsRampWhenSignalled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// 3 chunks over an hour: the first chunk, then the cancelled wait.
	held := hold(ctx, options{memory: 3 * chunkSize, ramp: time.Hour}, 4096, log.New(io.Discard, "", 0))
	if got := size(held); got != chunkSize {
		t.Errorf("holds %d bytes, want %d", got, chunkSize)
	}
}

func TestHoldRamps(t *testing.T) {
	// 3 chunks over 300ms: the third is due 200ms after the first.
	start := time.Now()
	held := hold(context.Background(), options{memory: 3 * chunkSize, ramp: 300 * time.Millisecond}, 4096, log.New(io.Discard, "", 0))
	if got := size(held); got != 3*chunkSize {
		t.Errorf("holds %d bytes, want %d", got, 3*chunkSize)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Errorf("ramp took %v, want at least 200ms", took)
	}
}
