package k3s

import (
	"path/filepath"

	"github.com/ballast-sched/ballast/core/cli/kube"
)

// Names of what Ballast writes on a k3s server.
const (
	// HelmChartName is the HelmChart object's name, which helm-controller also uses as the release name.
	HelmChartName = "ballast"
	// HelmChartNamespace is where k3s keeps its own HelmCharts.
	HelmChartNamespace = "kube-system"
	// DefaultDataDir is k3s's --data-dir default.
	DefaultDataDir = "/var/lib/rancher/k3s"
	// DefaultConfigDir is where k3s reads config.yaml and config.yaml.d.
	DefaultConfigDir = "/etc/rancher/k3s"
)

// Paths locates k3s's files under Root ("/" on a real host).
type Paths struct {
	// Root is prepended to every host path; tests point it at a fake tree.
	Root string
	// DataDir is k3s's --data-dir as seen on the host, default DefaultDataDir.
	DataDir string
}

// HostPaths returns the paths of a k3s server with default locations under root.
func HostPaths(root string) Paths {
	if root == "" {
		root = "/"
	}
	return Paths{Root: root, DataDir: DefaultDataDir}
}

func (p Paths) host(path string) string { return filepath.Join(p.Root, path) }

// ManifestsDir is k3s's auto-deploy directory.
func (p Paths) ManifestsDir() string { return p.host(filepath.Join(p.DataDir, "server", "manifests")) }

// Manifest is the HelmChart file Ballast writes.
func (p Paths) Manifest() string { return filepath.Join(p.ManifestsDir(), HelmChartName+".yaml") }

// StateDir holds Ballast's own host files: the install lock and the bootstrap scheduler config.
func (p Paths) StateDir() string { return p.host(filepath.Join(p.DataDir, "server", "ballast")) }

// LockFile serialises concurrent installs and uninstalls.
func (p Paths) LockFile() string { return filepath.Join(p.StateDir(), "install.lock") }

// BootstrapSchedulerConfig is the KubeSchedulerConfiguration k3s's embedded
// scheduler loads in replaceDefault mode.
func (p Paths) BootstrapSchedulerConfig() string {
	return filepath.Join(p.StateDir(), "bootstrap-scheduler.yaml")
}

// BootstrapSchedulerConfigInK3s is the same file as k3s itself opens it (no Root).
func (p Paths) BootstrapSchedulerConfigInK3s() string {
	return filepath.Join(p.DataDir, "server", "ballast", "bootstrap-scheduler.yaml")
}

// SchedulerKubeconfigInK3s is the credential k3s generates for its embedded scheduler.
func (p Paths) SchedulerKubeconfigInK3s() string {
	return filepath.Join(p.DataDir, "server", "cred", "scheduler.kubeconfig")
}

// KubeletClientCert is the client certificate k3s issues to this node's kubelet.
func (p Paths) KubeletClientCert() string {
	return p.host(filepath.Join(p.DataDir, "agent", "client-kubelet.crt"))
}

// ImagesDir is where k3s imports image archives from, on servers and agents
// alike.
func (p Paths) ImagesDir() string { return p.host(filepath.Join(p.DataDir, "agent", "images")) }

// PlacedImages records the image archives ballast install placed in
// ImagesDir, which ballast uninstall removes.
func (p Paths) PlacedImages() string { return filepath.Join(p.StateDir(), "placed-images") }

// DropIn is the k3s config drop-in Ballast writes in replaceDefault mode.
func (p Paths) DropIn() string {
	return p.host(filepath.Join(DefaultConfigDir, "config.yaml.d", "90-ballast-scheduler.yaml"))
}

// AdmissionPolicyDropIn is the k3s config drop-in that turns on the
// MutatingAdmissionPolicy API of a Kubernetes 1.34-1.35 API server.
func (p Paths) AdmissionPolicyDropIn() string {
	return p.host(filepath.Join(DefaultConfigDir, "config.yaml.d", "91-ballast-admission-policy.yaml"))
}

// Kubeconfig is the admin kubeconfig k3s writes for local tools; the CLI only
// uses it to talk to the API as the invoking admin, never copies it.
func (p Paths) Kubeconfig() string { return p.host(kube.K3sKubeconfig) }
