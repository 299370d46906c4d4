package sim

import _ "embed"

// schedulerConfig is scheduler/config/default-scheduler.yaml: Ballast as the
// cluster's default-scheduler profile. profiles_test.go keeps the copy equal
// to the shipped file.
//
//go:embed profiles/scheduler.yaml
var schedulerConfig string

// deschedulerPolicy is descheduler/config/policy.yaml, the shipped policy.
//
//go:embed profiles/policy.yaml
var deschedulerPolicy string
