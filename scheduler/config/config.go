// Package config holds the scheduler configurations Ballast ships, embedded
// so that programs such as the simulator run the shipped bytes themselves.
package config

import _ "embed"

// DefaultScheduler is default-scheduler.yaml: Ballast as the cluster's
// default-scheduler profile.
//
//go:embed default-scheduler.yaml
var DefaultScheduler string
