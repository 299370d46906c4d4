package demo

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
)

// TestRunPrintsEveryReplica runs the whole demo: a real control plane, the
// default kube-scheduler, the Deployment, the table.
func TestRunPrintsEveryReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	var out bytes.Buffer
	if err := Run(t.Context(), &out); err != nil {
		t.Fatalf("Run: %v", err)
	}
	rows := 0
	pods := 0
	for _, line := range strings.Split(out.String(), "\n") {
		fields := strings.Fields(line)
		if len(fields) != 7 || fields[0] == "NODE" {
			continue
		}
		n, err := strconv.Atoi(fields[2])
		if err != nil {
			t.Fatalf("pods column %q in %q: %v", fields[2], line, err)
		}
		rows++
		pods += n
	}
	if rows != len(Homelab) || pods != workloadReplicas {
		t.Errorf("table has %d node rows and %d pods, want %d and %d:\n%s", rows, pods, len(Homelab), workloadReplicas, out.String())
	}
}
