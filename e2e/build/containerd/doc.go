// Package containerd pins the containerd release the end-to-end lane's node
// runs: go.mod's tool directives name containerd, containerd-shim-runc-v2 and
// ctr, and `make e2e-bins` builds them statically from this module, outside
// go.work because containerd pins its own Kubernetes line. The lane
// (e2e/pkg/lane) configures and runs them; see docs/e2e.md.
package containerd
