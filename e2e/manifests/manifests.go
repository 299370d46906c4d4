// Package manifests holds the add-ons the end-to-end lane applies once its
// node is Ready: cluster DNS (CoreDNS) and metrics-server. Both run images
// built from this repository's static binaries and imported into the node's
// containerd (imagePullPolicy Never), so applying them pulls nothing.
package manifests

import _ "embed"

// CoreDNS is coredns.yaml: the kube-dns Service on 10.96.0.10 and a CoreDNS
// that serves cluster.local only.
//
//go:embed coredns.yaml
var CoreDNS []byte

// MetricsServer is metrics-server.yaml: metrics-server and its APIService
// v1beta1.metrics.k8s.io.
//
//go:embed metrics-server.yaml
var MetricsServer []byte
