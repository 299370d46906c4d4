package metricnames

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
)

func TestRecorderListsWhatIsRegistered(t *testing.T) {
	rec := &Recorder{}
	rec.MustRegister(prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "ballast", Name: "b_total", Help: "b"}, []string{"x"}))
	if err := rec.Register(prometheus.NewHistogram(prometheus.HistogramOpts{Name: "a_seconds", Help: "a"})); err != nil {
		t.Fatal(err)
	}
	names, err := rec.Names()
	if err != nil {
		t.Fatal(err)
	}
	// A vector without series is listed too: its name comes from its description.
	if diff := cmp.Diff([]string{"ballast_b_total", "a_seconds"}, names); diff != "" {
		t.Errorf("names (-want,+got):\n%s", diff)
	}

	path := filepath.Join(t.TempDir(), "x.txt")
	if err := os.WriteFile(path, Format("x", "go test -update", append(names, "a_seconds")), 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a_seconds", "ballast_b_total"}, read); diff != "" {
		t.Errorf("read back, sorted and once each (-want,+got):\n%s", diff)
	}
}
