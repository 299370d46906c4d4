package metricsapi

import (
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// Settable is a Source whose node usage tests set one node at a time.
//
// By default every answer is a fresh sample of the usage set last, stamped
// when it is served. With a Resolution it serves what metrics-server does:
// the usage as it was at its newest scrape, stamped with that scrape's time,
// the scrapes coming every Resolution from when the Settable was made.
type Settable struct {
	// Window is the window every sample stands for; 15 s when zero.
	Window time.Duration
	// Resolution is the time between scrapes (metrics-server's
	// --metric-resolution); zero serves every change at once. Set it before
	// the first Set.
	Resolution time.Duration

	mu    sync.Mutex
	usage map[string]corev1.ResourceList
	// epoch is the first scrape; scraped is the usage at the newest scrape,
	// taken at scrapedAt.
	epoch     time.Time
	scraped   map[string]corev1.ResourceList
	scrapedAt time.Time
	now       func() time.Time
}

// NewSettable returns a Settable without any node.
func NewSettable() *Settable {
	return &Settable{usage: map[string]corev1.ResourceList{}, epoch: time.Now(), now: time.Now}
}

// Set serves node's usage as cpu and memory quantities ("1500m", "3Gi"),
// from the next scrape on when there is a Resolution.
func (s *Settable) Set(node, cpu, memory string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scrapeLocked(s.now())
	s.usage[node] = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory)}
}

// scrapeLocked takes the scrape due at or before now if it has not been
// taken: the usage then was the usage now, since every change takes the
// scrapes due before it first.
func (s *Settable) scrapeLocked(now time.Time) {
	if s.Resolution <= 0 {
		return
	}
	due := s.epoch.Add(now.Sub(s.epoch).Truncate(s.Resolution))
	if s.scraped != nil && !due.After(s.scrapedAt) {
		return
	}
	s.scraped = maps.Clone(s.usage)
	s.scrapedAt = due
}

// NodeUsage implements Source.
func (s *Settable) NodeUsage() (map[string]corev1.ResourceList, time.Time, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	from, at := s.usage, now
	if s.Resolution > 0 {
		s.scrapeLocked(now)
		from, at = s.scraped, s.scrapedAt
	}
	out := make(map[string]corev1.ResourceList, len(from))
	for k, v := range from {
		out[k] = v.DeepCopy()
	}
	window := s.Window
	if window == 0 {
		window = 15 * time.Second
	}
	return out, at, window
}
