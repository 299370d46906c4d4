package sim

import "testing"

func TestTarget(t *testing.T) {
	result := func(spread float64, pingPong, onHog int, final ...NodeStep) *Result {
		return &Result{PingPong: pingPong, PlacedOnHog: onHog, Summary: Summary{Spread: spread, Final: final}}
	}
	for _, tc := range []struct {
		name string
		c    *Comparison
		met  bool
	}{
		{"half the spread", &Comparison{Scenario: "homelab-mixed", Default: result(40, 0, 0), Ballast: result(20, 0, 0)}, true},
		{"not half", &Comparison{Scenario: "request-skew", Default: result(40, 0, 0), Ballast: result(21, 0, 0)}, false},
		{"ping-pong fails any target", &Comparison{Scenario: "homelab-mixed", Default: result(40, 0, 0), Ballast: result(10, 1, 0)}, false},
		{"pod on the hog", &Comparison{Scenario: "memory-hog", Default: result(1, 0, 5), Ballast: result(1, 0, 1)}, false},
		{"hog avoided", &Comparison{Scenario: "memory-hog", Default: result(1, 0, 5), Ballast: result(1, 0, 0)}, true},
		{"3/3", &Comparison{Scenario: "new-node", Default: result(1, 0, 0), Ballast: result(0, 0, 0,
			NodeStep{Node: "a", Workloads: map[string]int{"web": 3}}, NodeStep{Node: "b", Workloads: map[string]int{"web": 3}})}, true},
		// b has none of web: 4 against 0.
		{"4/0", &Comparison{Scenario: "new-node", Default: result(1, 0, 0), Ballast: result(0, 0, 0,
			NodeStep{Node: "a", Workloads: map[string]int{"web": 4}}, NodeStep{Node: "b"})}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, met := Target(tc.c); met != tc.met {
				t.Errorf("Target met = %v, want %v", met, tc.met)
			}
		})
	}
}

func TestFinalPlacement(t *testing.T) {
	r := &Result{Summary: Summary{Final: []NodeStep{
		{Node: "a", Workloads: map[string]int{"web": 2, "db": 1}}, {Node: "b", Workloads: map[string]int{"web": 1}},
	}}}
	if got, want := FinalPlacement(r), "db: a 1; web: a 2, b 1"; got != want {
		t.Errorf("FinalPlacement = %q, want %q", got, want)
	}
}
