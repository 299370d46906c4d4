package loadawarebalance

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A move made through the exported Remember is one the other checks see:
// MovedOff at once, Bounced only after a replacement landed back.
func TestSharedMemory(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := NewStore()
	s.Lock()
	defer s.Unlock()
	w := Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	s.Remember(w, "a", "b", t0, NodeLoad{"memory": 4}, NodeLoad{"memory": 4})
	later := t0.Add(time.Minute)
	if !s.MovedOff(w, "a", later, 10*time.Minute) || s.MovedOff(w, "b", later, 10*time.Minute) {
		t.Error("MovedOff should hold for the source only")
	}
	if s.MovedOff(w, "a", t0.Add(10*time.Minute), 10*time.Minute) {
		t.Error("MovedOff after the cooldown")
	}
	if s.Bounced(w, "a", later, 10*time.Minute) {
		t.Error("Bounced before any replacement was seen")
	}
	// 4 % of memory is still expected on b right after the move.
	if got := s.InFlight("b", t0, 5*time.Minute)["memory"]; got != 4 {
		t.Errorf("in flight on b = %v, want 4", got)
	}
	back := pod("web-back", "a", "web", 40)
	back.CreationTimestamp = metav1.NewTime(later)
	if n := s.LandedBack(func(node string) []*v1.Pod {
		if node == "a" {
			return []*v1.Pod{back}
		}
		return nil
	}); n["a"] != 1 {
		t.Fatalf("landed back on a = %d, want 1", n["a"])
	}
	if !s.Bounced(w, "a", later, 10*time.Minute) {
		t.Error("Bounced is false after a replacement landed back")
	}
}
