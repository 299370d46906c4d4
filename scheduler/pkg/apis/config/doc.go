// Package config holds the typed arguments of the Ballast scheduler plugins,
// their defaults and their validation, and registers them in kube-scheduler's
// configuration scheme so that `pluginConfig` entries of a
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) decode into
// them.
//
// Each type is the wire format and the in-memory form at once: it is
// registered under both kube-scheduler's v1 and its internal version, so the
// scheduler's conversion between the two is the identity.
//
// zz_generated.deepcopy.go is generated (go generate, see types.go).
//
// +k8s:deepcopy-gen=package
package config
