package metricsapi

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Settable is a Source whose node usage tests set one node at a time; every
// answer is a fresh sample, stamped when it is served, as metrics-server's
// newest scrape would be.
type Settable struct {
	mu    sync.Mutex
	usage map[string]corev1.ResourceList
	// Window is the window every sample stands for; 15 s when zero.
	Window time.Duration
}

// NewSettable returns a Settable without any node.
func NewSettable() *Settable {
	return &Settable{usage: map[string]corev1.ResourceList{}}
}

// Set serves node's usage as cpu and memory quantities ("1500m", "3Gi").
func (s *Settable) Set(node, cpu, memory string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage[node] = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

// NodeUsage implements Source.
func (s *Settable) NodeUsage() (map[string]corev1.ResourceList, time.Time, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]corev1.ResourceList, len(s.usage))
	for k, v := range s.usage {
		out[k] = v.DeepCopy()
	}
	window := s.Window
	if window == 0 {
		window = 15 * time.Second
	}
	return out, time.Now(), window
}
