package options

import (
	"strings"
	"testing"
)

func TestOptionsValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Options)
		wantErr []string // fields the error must name; none: valid
	}{
		{name: "defaults", mutate: func(*Options) {}},
		{name: "library mode without address", mutate: func(o *Options) { o.LoadWatcherMode, o.LoadWatcherAddress = ModeLibrary, "" }},
		{name: "library mode with an address", mutate: func(o *Options) { o.LoadWatcherMode = ModeLibrary },
			wantErr: []string{"--load-watcher-address"}},
		{name: "service mode without address", mutate: func(o *Options) { o.LoadWatcherAddress = "" },
			wantErr: []string{"--load-watcher-address"}},
		{name: "CA file with an https address", mutate: func(o *Options) {
			o.LoadWatcherAddress, o.LoadWatcherCAFile = "https://lw.ballast-system.svc:2020", "/etc/ballast/load-watcher-ca/ca.crt"
		}},
		{name: "CA file with an http address", mutate: func(o *Options) { o.LoadWatcherCAFile = "/etc/ballast/load-watcher-ca/ca.crt" },
			wantErr: []string{"--load-watcher-ca-file"}},
		{name: "unknown mode and zero staleness", mutate: func(o *Options) { o.LoadWatcherMode, o.StaleAfter = "sidecar", 0 },
			wantErr: []string{"--load-watcher-mode", "--load-watcher-stale-after"}},
		{name: "explain endpoint off", mutate: func(o *Options) { o.ExplainAddress = "" }},
		{name: "explain endpoint on ::1", mutate: func(o *Options) { o.ExplainAddress = "[::1]:10261" }},
		{name: "explain endpoint on every address", mutate: func(o *Options) { o.ExplainAddress = "0.0.0.0:10261" },
			wantErr: []string{"--explain-address"}},
		{name: "explain endpoint on a host name", mutate: func(o *Options) { o.ExplainAddress = "localhost:10261" },
			wantErr: []string{"--explain-address"}},
		{name: "explain endpoint without a port", mutate: func(o *Options) { o.ExplainAddress = "127.0.0.1" },
			wantErr: []string{"--explain-address"}},
		{name: "leader lease", mutate: func(o *Options) { o.LeaderLease = "ballast-system/ballast-scheduler" }},
		{name: "leader lease without a namespace", mutate: func(o *Options) { o.LeaderLease = "ballast-scheduler" },
			wantErr: []string{"--leader-lease"}},
		{name: "leader lease with an empty name", mutate: func(o *Options) { o.LeaderLease = "ballast-system/" },
			wantErr: []string{"--leader-lease"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := NewOptions()
			tt.mutate(o)
			err := o.Validate()
			if len(tt.wantErr) == 0 {
				if err != nil {
					t.Errorf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want an error naming %v", tt.wantErr)
			}
			for _, f := range tt.wantErr {
				if !strings.Contains(err.Error(), f) {
					t.Errorf("error %q does not name %s", err, f)
				}
			}
		})
	}
}
