// Package prometheus reads node usage from a Prometheus server through the
// PromQL HTTP API (prometheus/client_golang api/v1).
//
// Each resource has one instant query returning, per node, the fraction (0–1)
// of the machine in use. Two default query sets work out of the box: plain
// node-exporter series, and the kube-prometheus recording rules. Series are
// matched to Kubernetes nodes by their `node` label, else by `instance` equal
// to the node name, else by the host part of `instance` equal to the node
// name or its InternalIP, so both relabelled and raw `IP:port` targets work.
package prometheus
