package sim

import (
	_ "embed"

	deschedconfig "github.com/ballast-sched/ballast/descheduler/config"
	schedconfig "github.com/ballast-sched/ballast/scheduler/config"
)

// schedulerConfig is the shipped scheduler/config/default-scheduler.yaml:
// Ballast as the cluster's default-scheduler profile, so a simulation runs
// what users install.
var schedulerConfig = schedconfig.DefaultScheduler

// deschedulerPolicy is the shipped descheduler/config/policy.yaml.
var deschedulerPolicy = deschedconfig.Policy

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
