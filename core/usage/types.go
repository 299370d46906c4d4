package usage

import (
	"strings"
	"time"
)

// Resource names a measured resource.
type Resource string

const (
	// CPU is processor utilisation as a percentage of allocatable CPU.
	CPU Resource = "cpu"
	// Memory is working-set memory as a percentage of allocatable memory.
	Memory Resource = "memory"
)

// Resources lists every resource load-watcher measures, in a stable order.
var Resources = []Resource{CPU, Memory}

// Window is the length of a sliding window over which statistics are kept.
type Window time.Duration

const (
	// Window1m covers the last minute of samples.
	Window1m = Window(time.Minute)
	// Window5m covers the last five minutes of samples.
	Window5m = Window(5 * time.Minute)
	// Window15m covers the last fifteen minutes of samples; it is the window
	// of the paypal/load-watcher compatible API.
	Window15m = Window(15 * time.Minute)
)

// DefaultWindows are the windows load-watcher keeps unless told otherwise.
var DefaultWindows = []Window{Window1m, Window5m, Window15m}

// String formats the window the way the API and flags spell it: "5m", not "5m0s".
func (w Window) String() string {
	s := time.Duration(w).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// Duration returns the window as a time.Duration.
func (w Window) Duration() time.Duration { return time.Duration(w) }

// Stats summarises the samples of one resource over one window.
type Stats struct {
	// Avg is the arithmetic mean of the samples.
	Avg float64 `json:"avg"`
	// Std is the population standard deviation of the samples.
	Std float64 `json:"std"`
	// Max is the largest sample.
	Max float64 `json:"max"`
	// P95 is the 95th percentile of the samples (nearest rank).
	P95 float64 `json:"p95"`
	// Latest is the newest sample.
	Latest float64 `json:"latest"`
	// Samples is how many samples the window holds.
	Samples int `json:"samples"`
}

// NodeUsage is everything known about the real usage of one node.
type NodeUsage struct {
	// Node is the Kubernetes node name.
	Node string `json:"node"`
	// SampleTime is when the newest sample was taken at the source.
	SampleTime time.Time `json:"sampleTime"`
	// Stale is true when the newest sample is older than the staleness
	// threshold: callers must not trust it for placement.
	Stale bool `json:"stale"`
	// Invalid, when not empty, says why the node's data was refused (a
	// value out of range, a sample time in the future, …). Such a node is
	// also Stale: callers treat it as they treat old data.
	Invalid string `json:"invalid,omitempty"`
	// Windows holds statistics per window and resource.
	Windows map[Window]map[Resource]Stats `json:"-"`
}

// Get returns the statistics of resource r over window w, and whether any
// samples exist for them.
func (n NodeUsage) Get(w Window, r Resource) (Stats, bool) {
	s, ok := n.Windows[w][r]
	return s, ok && s.Samples > 0
}

// Snapshot is the usage of every node with data at one moment.
type Snapshot struct {
	// Time is when the snapshot was assembled.
	Time time.Time `json:"time"`
	// Source names the provider the samples came from ("metrics-server", "prometheus").
	Source string `json:"source"`
	// Nodes maps node names to their usage; nodes without samples are absent.
	Nodes map[string]NodeUsage `json:"nodes"`
}

// Node returns the usage of the named node, and false when the node has no
// data or its data is stale.
func (s *Snapshot) Node(name string) (NodeUsage, bool) {
	if s == nil {
		return NodeUsage{}, false
	}
	n, ok := s.Nodes[name]
	return n, ok && !n.Stale
}
