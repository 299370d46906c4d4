package k3s

import (
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Host is what the local filesystem says about k3s.
type Host struct {
	// Server is true when this host runs a k3s server: only there does the
	// auto-deploy directory exist.
	Server bool
	// Agent is true when only a k3s agent unit is present.
	Agent bool
	// Evidence lists the paths found, for messages.
	Evidence []string
}

// DetectHost looks for the k3s binary, its systemd or OpenRC units and the
// auto-deploy directory under p.Root.
func DetectHost(p Paths) Host {
	var h Host
	exists := func(path string) bool {
		_, err := os.Stat(p.host(path))
		if err == nil {
			h.Evidence = append(h.Evidence, path)
		}
		return err == nil
	}
	binary := false
	for _, b := range []string{"/usr/local/bin/k3s", "/usr/bin/k3s", "/opt/bin/k3s"} {
		binary = exists(b) || binary
	}
	serverUnit := false
	for _, u := range []string{"/etc/systemd/system/k3s.service", "/lib/systemd/system/k3s.service", "/usr/lib/systemd/system/k3s.service", "/etc/init.d/k3s"} {
		serverUnit = exists(u) || serverUnit
	}
	agentUnit := false
	for _, u := range []string{"/etc/systemd/system/k3s-agent.service", "/etc/init.d/k3s-agent"} {
		agentUnit = exists(u) || agentUnit
	}
	manifests := exists(filepath.Join(p.DataDir, "server", "manifests"))
	h.Server = manifests && (binary || serverUnit)
	h.Agent = !h.Server && agentUnit
	return h
}

// ClusterIsK3s reports whether nodes look like k3s nodes: a kubelet version
// with "+k3s" or the instance-type label k3s sets.
func ClusterIsK3s(nodes []corev1.Node) (bool, string) {
	for _, n := range nodes {
		if strings.Contains(n.Status.NodeInfo.KubeletVersion, "+k3s") {
			return true, "node " + n.Name + " runs kubelet " + n.Status.NodeInfo.KubeletVersion
		}
		if n.Labels[corev1.LabelInstanceTypeStable] == "k3s" {
			return true, "node " + n.Name + " has label " + corev1.LabelInstanceTypeStable + "=k3s"
		}
	}
	return false, ""
}
