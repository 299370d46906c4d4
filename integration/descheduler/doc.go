// Package integration holds the descheduler to what the chart grants it,
// against the in-process cluster of the cluster module: a real
// kube-apiserver with RBAC and admission, where the chart's
// ValidatingAdmissionPolicies run. The tests start a control plane each and
// are skipped with -short.
package integration
