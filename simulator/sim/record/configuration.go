package record

import (
	"fmt"
	"strings"
)

// ConfigSource says where the Ballast run's scheduler configuration and
// descheduler policy came from.
type ConfigSource string

const (
	// ConfigShipped is the shipped scheduler/config/default-scheduler.yaml
	// and descheduler/config/policy.yaml.
	ConfigShipped ConfigSource = "shipped"
	// ConfigValues is what the umbrella chart renders with the user's values.
	ConfigValues ConfigSource = "values"
	// ConfigFiles is a KubeSchedulerConfiguration or DeschedulerPolicy file
	// given as is; what was not given stays shipped.
	ConfigFiles ConfigSource = "files"
)

// Configuration names the configuration of the Ballast run, so a result
// says what it was obtained with.
type Configuration struct {
	Source ConfigSource `json:"source"`
	// Inputs are the values files and --set expressions, or the files, in
	// the order they were given.
	Inputs []string `json:"inputs,omitempty"`
}

// String describes the configuration for a terminal.
func (c Configuration) String() string {
	var s string
	switch c.Source {
	case ConfigShipped:
		s = "shipped defaults"
	case ConfigValues:
		s = "the chart with your values"
	case ConfigFiles:
		s = "your files, the rest shipped"
	default:
		s = string(c.Source)
	}
	if len(c.Inputs) > 0 {
		s = fmt.Sprintf("%s (%s)", s, strings.Join(c.Inputs, " "))
	}
	return s
}
