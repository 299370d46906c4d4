package schedulerconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/usage"
)

func schedulerConfig(memoryThreshold string) string {
	return "profiles:\n- schedulerName: ballast-scheduler\n  pluginConfig:\n  - name: LoadAware\n    args: {thresholds: {cpu: 85, memory: " + memoryThreshold + "}}\n"
}

func TestSchedulerModelReadsTheSchedulersFile(t *testing.T) {
	logger := klog.Background()
	path := filepath.Join(t.TempDir(), "config.yaml")

	// No file yet (the chart runs no scheduler): LoadAware's defaults.
	m, err := New(logger, path, "ballast-scheduler")
	if err != nil {
		t.Fatalf("a file that is not there: %v", err)
	}
	if got := m.SchedulerThresholds()[usage.Memory]; got != 90 {
		t.Errorf("memory threshold without a file = %v, want LoadAware's default 90", got)
	}

	if err := os.WriteFile(path, []byte(schedulerConfig("70")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.read(logger); err != nil {
		t.Fatal(err)
	}
	if got := m.SchedulerThresholds()[usage.Memory]; got != 70 {
		t.Errorf("memory threshold after the file appeared = %v, want 70", got)
	}

	// A change that does not validate keeps the last good model.
	if err := os.WriteFile(path, []byte(schedulerConfig("0")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := m.read(logger); err == nil || !strings.Contains(err.Error(), "thresholds[memory]") {
		t.Errorf("an invalid file: error %v, want one naming thresholds[memory]", err)
	}
	if got := m.SchedulerThresholds()[usage.Memory]; got != 70 {
		t.Errorf("memory threshold after an invalid change = %v, want the last good 70", got)
	}

	// At start, an invalid file stops the descheduler.
	if _, err := New(logger, path, "ballast-scheduler"); err == nil || !strings.Contains(err.Error(), "--scheduler-config") {
		t.Errorf("an invalid file at start: error %v, want one naming --scheduler-config", err)
	}
}
