// Package status collects and prints the health of a Ballast installation:
// its Deployments, load-watcher's freshness and real usage per node.
package status

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// watcherMetrics is the /watcher document (wire-compatible with paypal/load-watcher).
type watcherMetrics struct {
	Timestamp int64  `json:"timestamp"`
	Source    string `json:"source"`
	Window    struct {
		Duration string `json:"duration"`
	} `json:"window"`
	Data struct {
		NodeMetricsMap map[string]struct {
			Metrics []struct {
				Type     string  `json:"type"`
				Operator string  `json:"operator"`
				Value    float64 `json:"value"`
			} `json:"metrics"`
		} `json:"NodeMetricsMap"`
	} `json:"data"`
}

// NodeUsage is one row of the usage table, in percent of allocatable.
type NodeUsage struct {
	Node      string
	CPU       float64
	Memory    float64
	HasCPU    bool
	HasMemory bool
}

// Usage is what load-watcher reported.
type Usage struct {
	Source string
	Window string
	// Time is when load-watcher produced the snapshot.
	Time  time.Time
	Nodes []NodeUsage
}

// parseWatcher decodes a /watcher response, taking the average of each resource.
func parseWatcher(body []byte) (Usage, error) {
	var m watcherMetrics
	if err := json.Unmarshal(body, &m); err != nil {
		return Usage{}, fmt.Errorf("decode load-watcher /watcher response: %w", err)
	}
	u := Usage{Source: m.Source, Window: m.Window.Duration}
	if m.Timestamp > 0 {
		u.Time = time.Unix(m.Timestamp, 0)
	}
	for node, nm := range m.Data.NodeMetricsMap {
		row := NodeUsage{Node: node}
		for _, metric := range nm.Metrics {
			if !strings.EqualFold(metric.Operator, "AVG") {
				continue
			}
			switch strings.ToLower(metric.Type) {
			case "cpu":
				row.CPU, row.HasCPU = metric.Value, true
			case "memory":
				row.Memory, row.HasMemory = metric.Value, true
			}
		}
		u.Nodes = append(u.Nodes, row)
	}
	sortNodes(u.Nodes)
	return u, nil
}
