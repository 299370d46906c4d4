// Package config holds the scheduler configurations Ballast ships, embedded
// so that programs such as the simulator, and tests in other modules, run the
// shipped bytes themselves.
package config

import (
	"embed"
	"fmt"
)

// DefaultScheduler is default-scheduler.yaml: Ballast as the cluster's
// default-scheduler profile.
//
//go:embed default-scheduler.yaml
var DefaultScheduler string

// shipped are every configuration of this directory.
//
//go:embed *.yaml
var shipped embed.FS

// Shipped returns the shipped configuration file name (for example
// ballast-scheduler.yaml).
func Shipped(name string) (string, error) {
	data, err := shipped.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("no shipped scheduler configuration %q: %w", name, err)
	}
	return string(data), nil
}
