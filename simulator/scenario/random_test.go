package scenario

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// Random scenarios are valid, repeatable from their seed, and of the shapes
// asked for: within the node bounds, with workloads and events.
func TestRandom(t *testing.T) {
	var arm, amd, selectors, joins, hogs, scales, leaks, daemonSets, outages, statefulSets, cronJobs int
	for seed := range int64(300) {
		o := RandomOptions{MinNodes: 2, MaxNodes: 60, Duration: time.Hour}
		sc, err := Random(seed, o)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		again, err := Random(seed, o)
		if err != nil {
			t.Fatal(err)
		}
		a, _ := yaml.Marshal(sc)
		b, _ := yaml.Marshal(again)
		if diff := cmp.Diff(string(a), string(b)); diff != "" {
			t.Fatalf("seed %d drew two scenarios (-first,+second):\n%s", seed, diff)
		}
		if n := len(sc.Nodes); n < o.MinNodes || n > o.MaxNodes {
			t.Errorf("seed %d: %d nodes", seed, n)
		}
		if len(sc.Workloads) == 0 {
			t.Errorf("seed %d: no workload", seed)
		}
		for _, n := range sc.Nodes {
			if n.Arch == "arm64" {
				arm++
			} else {
				amd++
			}
		}
		for _, w := range sc.Workloads {
			if len(w.NodeSelector) > 0 {
				selectors++
			}
			if w.Usage.Memory.Type == Ramp {
				leaks++
			}
			if w.IsDaemonSet() {
				daemonSets++
			}
			if w.IsStatefulSet() {
				statefulSets++
			}
			if w.Kind == CronJob {
				cronJobs++
			}
		}
		for _, e := range sc.Events {
			switch e.Type {
			case Join:
				joins++
			case Hog:
				hogs++
			case Scale:
				scales++
			case Reboot, PowerLoss:
				outages++
			}
		}
	}
	// Every shape shows up in a few hundred draws.
	for what, n := range map[string]int{"arm64 nodes": arm, "amd64 nodes": amd, "node selectors": selectors, "joins": joins,
		"hogs": hogs, "scales": scales, "leaks": leaks, "DaemonSets": daemonSets, "outages": outages,
		"StatefulSets": statefulSets, "CronJobs": cronJobs} {
		if n == 0 {
			t.Errorf("300 draws gave no %s", what)
		}
	}
	if _, err := Random(1, RandomOptions{MinNodes: 10, MaxNodes: 5}); err == nil {
		t.Error("max nodes below min nodes was accepted")
	}
}

// A run shorter or longer than the default hour still draws valid homelabs:
// every event within the run (a cordon's end included).
func TestRandomFitsTheDuration(t *testing.T) {
	for _, d := range []time.Duration{30 * time.Minute, 45 * time.Minute, 2 * time.Hour} {
		for seed := range int64(200) {
			if _, err := Random(seed, RandomOptions{MinNodes: 4, MaxNodes: 8, Duration: d}); err != nil {
				t.Errorf("%s, seed %d: %v", d, seed, err)
			}
		}
	}
}
