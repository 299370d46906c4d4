package model

// Mode says which scheduling stack a run simulates.
type Mode string

const (
	// ModeDefault runs the upstream kube-scheduler alone.
	ModeDefault Mode = "default"
	// ModeBallast runs ballast-scheduler's shipped profile as the default
	// scheduler, fed by load-watcher, and the shipped descheduler policy.
	ModeBallast Mode = "ballast"
	// ModeNone runs no scheduler: pods wait for an external one. Only a
	// served cluster offers it.
	ModeNone Mode = "none"
	// ModePeer is the upstream load-aware setup Ballast is compared with:
	// scheduler-plugins' Trimaran in its own kube-scheduler process and the
	// upstream descheduler's LowNodeUtilization on metrics.k8s.io. Only
	// RunPeer runs it, on a served cluster.
	ModePeer Mode = "peer"
)
