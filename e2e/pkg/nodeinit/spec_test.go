package nodeinit

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func validSpec() Spec {
	return Spec{
		Cgroup: "/ballast-e2e/node", NetNS: "/run/netns/ballast-e2e", ReadyFile: "/tmp/ready",
		Processes: []Process{{Name: "containerd", Path: "/bin/containerd", Log: "/tmp/containerd.log",
			ReadyTimeout: Duration{30 * time.Second}}},
	}
}

func TestValidate(t *testing.T) {
	if err := validSpec().Validate(); err != nil {
		t.Fatalf("valid spec refused: %v", err)
	}
	tests := []struct {
		name  string
		edit  func(*Spec)
		wants []string
	}{
		{"cgroup at the root", func(s *Spec) { s.Cgroup = "/" }, []string{"cgroup:"}},
		{"relative cgroup", func(s *Spec) { s.Cgroup = "ballast" }, []string{"cgroup:"}},
		{"relative netns", func(s *Spec) { s.NetNS = "ballast-e2e" }, []string{"netns:"}},
		{"relative private dir", func(s *Spec) { s.PrivateDirs = []string{"/run/netns", "var/log"} }, []string{"privateDirs[1]"}},
		{"no processes", func(s *Spec) { s.Processes = nil }, []string{"processes:"}},
		{"process without a log", func(s *Spec) { s.Processes[0].Log = "" }, []string{"processes[0]"}},
		{"every error at once", func(s *Spec) { s.NetNS = ""; s.ReadyFile = "" }, []string{"netns:", "readyFile:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := validSpec()
			tc.edit(&s)
			err := s.Validate()
			if err == nil {
				t.Fatal("invalid spec accepted")
			}
			for _, w := range tc.wants {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

func TestSpecRoundTripsThroughJSON(t *testing.T) {
	raw, err := json.Marshal(validSpec())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"readyTimeout":"30s"`) {
		t.Errorf("durations are not written as strings: %s", raw)
	}
	var back Spec
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if got := back.Processes[0].ReadyTimeout.Duration; got != 30*time.Second {
		t.Errorf("readyTimeout = %s after a round trip, want 30s", got)
	}
	if err := json.Unmarshal([]byte(`{"processes":[{"readyTimeout":"soon"}]}`), &back); err == nil {
		t.Error("a malformed duration was accepted")
	}
}
