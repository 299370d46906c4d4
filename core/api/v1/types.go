// Package v1 declares the wire format of GET /api/v1/usage, load-watcher's
// own endpoint: every window, every statistic, the sample age and a stale
// flag per node. The HTTP client decodes it back into a usage.Snapshot.
package v1

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/usage"
)

// APIVersion is the value of UsageList.APIVersion.
const APIVersion = "load-watcher/v1"

// Path is where the endpoint is served.
const Path = "/api/v1/usage"

// UsageList is the response of GET /api/v1/usage.
type UsageList struct {
	// APIVersion is always APIVersion.
	APIVersion string `json:"apiVersion"`
	// Time is when the server assembled the response.
	Time time.Time `json:"time"`
	// Source names the usage provider.
	Source string `json:"source"`
	// PeriodSeconds is the sampling period.
	PeriodSeconds float64 `json:"periodSeconds"`
	// StaleAfterSeconds is the server's staleness threshold.
	StaleAfterSeconds float64 `json:"staleAfterSeconds"`
	// Windows lists the windows present per node, shortest first.
	Windows []string `json:"windows"`
	// Nodes maps node names to their usage.
	Nodes map[string]NodeUsage `json:"nodes"`
	// NodesWithoutSamples lists cluster nodes with no usable sample yet:
	// their usage is unknown, not zero.
	NodesWithoutSamples []string `json:"nodesWithoutSamples"`
}

// NodeUsage is one node's usage.
type NodeUsage struct {
	// SampleTime is when the newest sample was taken at the source.
	SampleTime time.Time `json:"sampleTime"`
	// SampleAgeSeconds is Time minus SampleTime.
	SampleAgeSeconds float64 `json:"sampleAgeSeconds"`
	// Stale is true when the sample is older than StaleAfterSeconds.
	Stale bool `json:"stale"`
	// Windows maps window ("1m", "5m", "15m") and resource ("cpu",
	// "memory") to statistics in percent of allocatable.
	Windows map[string]map[usage.Resource]usage.Stats `json:"windows"`
}

// ParseWindows parses a list of windows as load-watcher's --windows takes
// it, reporting every invalid one at its index under path.
func ParseWindows(path *field.Path, list []string) ([]usage.Window, error) {
	var errs field.ErrorList
	out := make([]usage.Window, 0, len(list))
	for i, s := range list {
		w, err := ParseWindow(strings.TrimSpace(s))
		if err != nil {
			errs = append(errs, field.Invalid(path.Index(i), s, err.Error()))
			continue
		}
		out = append(out, w)
	}
	return out, errs.ToAggregate()
}

// ParseWindow parses a window as the API spells it ("5m", "1m30s").
func ParseWindow(s string) (usage.Window, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid window %q: want a positive duration such as 5m", s)
	}
	return usage.Window(d), nil
}
