package v1

import (
	"testing"
	"time"

	"github.com/ballast-sched/ballast/core/usage"
)

func TestParseWindow(t *testing.T) {
	tests := []struct {
		in      string
		want    usage.Window
		wantErr bool
	}{
		{in: "5m", want: usage.Window5m},
		{in: "1m30s", want: usage.Window(90 * time.Second)},
		{in: "15m0s", want: usage.Window15m},
		{in: "0s", wantErr: true},
		{in: "-1m", wantErr: true},
		{in: "soon", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseWindow(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseWindow(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
		// Round trip: what the API writes, it reads back.
		if err == nil {
			if back, _ := ParseWindow(got.String()); back != got {
				t.Errorf("ParseWindow(%q.String()) = %v, want %v", got, back, got)
			}
		}
	}
}
