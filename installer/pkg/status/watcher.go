// Package status collects and prints the health of a Ballast installation:
// its Deployments, load-watcher's freshness and real usage per node.
package status

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ballast-sched/ballast/load-watcher/pkg/api/watcher"
)

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
	var m watcher.WatcherMetrics
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
			if !strings.EqualFold(metric.Operator, watcher.OperatorAvg) {
				continue
			}
			switch {
			case strings.EqualFold(metric.Type, watcher.TypeCPU):
				row.CPU, row.HasCPU = metric.Value, true
			case strings.EqualFold(metric.Type, watcher.TypeMemory):
				row.Memory, row.HasMemory = metric.Value, true
			}
		}
		u.Nodes = append(u.Nodes, row)
	}
	sortNodes(u.Nodes)
	return u, nil
}
