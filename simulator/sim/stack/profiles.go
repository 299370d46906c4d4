package stack

import (
	_ "embed"

	deschedconfig "github.com/ballast-sched/ballast/descheduler/config"
	schedconfig "github.com/ballast-sched/ballast/scheduler/config"
)

// SchedulerConfig is the shipped scheduler/config/default-scheduler.yaml:
// Ballast as the cluster's default-scheduler profile, so a simulation runs
// what users install.
var SchedulerConfig = schedconfig.DefaultScheduler

// DeschedulerPolicy is the shipped descheduler/config/policy.yaml.
var DeschedulerPolicy = deschedconfig.Policy

// PeerDeschedulerPolicy is the upstream load-aware peer's DeschedulerPolicy:
// upstream LowNodeUtilization on metrics.k8s.io.
//
//go:embed profiles/peer-policy.yaml
var PeerDeschedulerPolicy string
