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

// peerSchedulerConfig is the upstream load-aware peer's
// KubeSchedulerConfiguration for scheduler-plugins' Trimaran, a template of
// the kubeconfig and load-watcher's address (peerSchedulerValues).
//
//go:embed profiles/peer-scheduler.yaml
var peerSchedulerConfig string

// peerDeschedulerPolicy is the upstream load-aware peer's DeschedulerPolicy:
// upstream LowNodeUtilization on metrics.k8s.io.
//
//go:embed profiles/peer-policy.yaml
var peerDeschedulerPolicy string
