package sim

import (
	"os"
	"testing"
)

// TestProfilesMatchShippedFiles keeps the embedded copies equal to the
// configuration Ballast ships, so a simulation runs what users install.
func TestProfilesMatchShippedFiles(t *testing.T) {
	for _, tc := range []struct {
		name, shipped, embedded string
	}{
		{"scheduler", "../../scheduler/config/default-scheduler.yaml", schedulerConfig},
		{"descheduler", "../../descheduler/config/policy.yaml", deschedulerPolicy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := os.ReadFile(tc.shipped)
			if err != nil {
				t.Fatalf("reading the shipped file: %v", err)
			}
			if string(data) != tc.embedded {
				t.Errorf("sim/profiles copy differs from %s; copy it again", tc.shipped)
			}
		})
	}
}
