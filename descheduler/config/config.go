// Package config holds the descheduler policy Ballast ships, embedded so
// that programs such as the simulator run the shipped bytes themselves.
package config

import _ "embed"

// Policy is policy.yaml, the shipped DeschedulerPolicy.
//
//go:embed policy.yaml
var Policy string
