// Package watcher declares the wire format of GET /watcher, the endpoint
// compatible with paypal/load-watcher v0.2.x, so unmodified Trimaran
// plugins and upstream clients parse it. Field names and JSON keys follow
// upstream exactly, including the capitalised "NodeMetricsMap" key; every
// field is always present, as upstream's encoder writes them.
package watcher

// Metric types and operators as upstream spells them.
const (
	TypeCPU        = "CPU"
	TypeMemory     = "Memory"
	OperatorAvg    = "AVG"
	OperatorStd    = "STD"
	OperatorLatest = "Latest"
)

// WatcherMetrics is the whole /watcher response.
type WatcherMetrics struct {
	// Timestamp is the Unix time of the response.
	Timestamp int64 `json:"timestamp"`
	// Window is the statistics window the values cover.
	Window Window `json:"window"`
	// Source names the usage provider.
	Source string `json:"source"`
	// Data holds the per-node metrics.
	Data Data `json:"data"`
}

// Window is the time span of the statistics.
type Window struct {
	// Duration is the window length, e.g. "15m".
	Duration string `json:"duration"`
	// Start is the Unix time the window starts.
	Start int64 `json:"start"`
	// End is the Unix time the window ends.
	End int64 `json:"end"`
}

// Data maps node names to their metrics.
type Data struct {
	NodeMetricsMap map[string]NodeMetrics `json:"NodeMetricsMap"`
}

// NodeMetrics are one node's metrics.
type NodeMetrics struct {
	Metrics  []Metric `json:"metrics"`
	Tags     Tags     `json:"tags"`
	Metadata Metadata `json:"metadata"`
}

// Metric is one statistic of one resource.
type Metric struct {
	// Name is the metric's name at the source.
	Name string `json:"name"`
	// Type is TypeCPU or TypeMemory.
	Type string `json:"type"`
	// Operator is OperatorAvg, OperatorStd or OperatorLatest.
	Operator string `json:"operator"`
	// Rollup is the window the statistic covers, e.g. "15m".
	Rollup string `json:"rollup"`
	// Value is in percent of allocatable.
	Value float64 `json:"value"`
}

// Tags is always empty, as upstream's.
type Tags struct{}

// Metadata carries the node's data centre, empty in Kubernetes clusters.
type Metadata struct {
	DataCenter string `json:"dataCenter"`
}
