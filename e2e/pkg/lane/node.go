package lane

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/ballast-sched/ballast/e2e/pkg/nodeinit"
)

// nodeConfig is what the node's configuration files are rendered from.
type nodeConfig struct {
	Dir, Bin, Name         string
	Cgroup, NetNS          string
	NodeIP, PodCIDR        string
	PodGateway, ClusterDNS string
	ClusterCIDR            string
	SandboxImage           string
	CACert                 string
	ServingCert            string
	ServingKey             string
	KubeletKubeconfig      string
	KubeProxyKubeconfig    string
	SystemReservedMemory   int64
	Socket                 string
	Eviction               evictionThresholds
}

// evictionThresholds are the kubelet's hard eviction thresholds: under one,
// it taints the node (memory or disk pressure) and evicts pods. The disk
// ones are percentages of the filesystem of the lane's dir, which holds the
// kubelet's root (nodefs) and containerd's (imagefs); preflight checks the
// host against them.
type evictionThresholds struct {
	MemoryAvailable string
	// NodefsAvailable, NodefsInodesFree and ImagefsAvailable are percents.
	NodefsAvailable, NodefsInodesFree, ImagefsAvailable int
}

// evictionHard is what the lane's kubelets run with.
var evictionHard = evictionThresholds{MemoryAvailable: "100Mi", NodefsAvailable: 5, NodefsInodesFree: 5, ImagefsAvailable: 5}

var containerdConfig = template.Must(template.New("containerd").Parse(`# containerd 2.x for the lane's node: CRI with runc on cgroupfs (the node has
# no systemd), overlayfs, Debian's CNI plugins, everything under the node's dir.
version = 3
root = "{{.Dir}}/containerd/root"
state = "{{.Dir}}/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.blockfile",
  "io.containerd.snapshotter.v1.erofs"]

[grpc]
  address = "{{.Socket}}"

[ttrpc]
  address = "{{.Socket}}.ttrpc"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  # Registries the node trusts over plain HTTP (Lane.ServeRegistry), one
  # hosts.toml each, read at every pull.
  [plugins."io.containerd.cri.v1.images".registry]
    config_path = "{{.Dir}}/containerd/certs.d"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "{{.SandboxImage}}"

[plugins."io.containerd.cri.v1.runtime"]
  # Root here lacks CAP_SYS_RESOURCE, so no process may lower its
  # oom_score_adj, and the kubelet asks for -998 for every pod sandbox: runc's
  # init then dies ("can't get final child's PID from pipe"). Clamping to
  # containerd's own score is what rootless and nested nodes do.
  restrict_oom_score_adj = true
  # cgroup v1 is deprecated in containerd 2.2, not gone: the deprecation
  # alone must not turn the CRI status's condition to failed.
  ignore_deprecation_warnings = ["io.containerd.deprecation/cgroup-v1"]
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "/usr/bin/runc"
        Root = "{{.Dir}}/containerd/runc"
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = "{{.Dir}}/cni/net.d"

[plugins."io.containerd.grpc.v1.cri"]
  disable_tcp_service = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
`))

var cniConfig = template.Must(template.New("cni").Parse(`{
  "cniVersion": "1.0.0",
  "name": "ballast-e2e",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni0",
      "isGateway": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "{{.Dir}}/cni/ipam",
        "ranges": [[{"subnet": "{{.PodCIDR}}", "gateway": "{{.PodGateway}}"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
`))

var kubeletConfig = template.Must(template.New("kubelet").Parse(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: {{.NodeIP}}
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: {{.CACert}}
authorization:
  mode: Webhook
tlsCertFile: {{.ServingCert}}
tlsPrivateKeyFile: {{.ServingKey}}
containerRuntimeEndpoint: unix://{{.Socket}}
# The machine has cgroup v1 and no systemd; Kubernetes 1.35+ refuses cgroup
# v1 unless told otherwise.
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
clusterDNS: [{{.ClusterDNS}}]
clusterDomain: cluster.local
resolvConf: {{.Dir}}/resolv.conf
podLogsDir: {{.Dir}}/pod-logs
staticPodPath: ""
# The node is a homelab-sized machine: what the host has beyond it is
# reserved, so allocatable memory (what Ballast's percentages are of) is the
# node's own.
systemReserved:
  memory: "{{.SystemReservedMemory}}"
evictionHard:
  memory.available: {{.Eviction.MemoryAvailable}}
  nodefs.available: {{.Eviction.NodefsAvailable}}%
  nodefs.inodesFree: {{.Eviction.NodefsInodesFree}}%
  imagefs.available: {{.Eviction.ImagefsAvailable}}%
imageGCHighThresholdPercent: 100
serializeImagePulls: false
# The kubelet's default -999 needs CAP_SYS_RESOURCE, which root lacks here.
oomScoreAdj: 0
`))

var kubeProxyConfig = template.Must(template.New("kube-proxy").Parse(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: {{.KubeProxyKubeconfig}}
hostnameOverride: {{.Name}}
mode: iptables
clusterCIDR: {{.ClusterCIDR}}
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# kube-proxy's default -999 needs CAP_SYS_RESOURCE, which root lacks here.
oomScoreAdj: 0
# Leave the node's conntrack table and timeouts as the kernel has them.
conntrack:
  maxPerCore: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`))

// laneNode is one node of the lane: a network namespace, a cgroup, and
// containerd, the kubelet and kube-proxy inside them.
type laneNode struct {
	name   string
	net    network
	cgroup string
	dir    string
	socket string
	proc   *process
	// pausedKubelet is the pid of the node's kubelet while PauseKubelet
	// holds it stopped.
	pausedKubelet int
}

// newLaneNode names the i-th node's parts. They are fixed, so a new run finds
// and removes what a crashed one left; the first node keeps the names a
// one-node lane always had.
func newLaneNode(laneDir string, i int) *laneNode {
	n := &laneNode{
		name:   NodeName,
		net:    network{netns: netnsName, hostLink: fmt.Sprintf("%s%d", netnsName, i), addrs: addrsOf(i)},
		cgroup: nodesCgroup + "/node",
		dir:    filepath.Join(laneDir, "node"),
	}
	if i > 0 {
		suffix := fmt.Sprintf("-%d", i+1)
		n.name += suffix
		n.net.netns += suffix
		n.cgroup += suffix
		n.dir += suffix
	}
	n.socket = filepath.Join(n.dir, "containerd", "containerd.sock")
	return n
}

// writeNodeFiles renders the node's configuration and its ballast-node spec,
// and returns the spec's path.
func writeNodeFiles(cfg nodeConfig) (string, error) {
	for _, d := range []string{"containerd", "cni/net.d", "cni/ipam", "kubelet", "pod-logs"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o755); err != nil {
			return "", fmt.Errorf("creating the node's %s dir: %w", d, err)
		}
	}
	files := []struct {
		path string
		tmpl *template.Template
	}{
		{"containerd/config.toml", containerdConfig},
		{"cni/net.d/10-ballast-e2e.conflist", cniConfig},
		{"kubelet/config.yaml", kubeletConfig},
		{"kube-proxy.yaml", kubeProxyConfig},
	}
	for _, f := range files {
		var b strings.Builder
		if err := f.tmpl.Execute(&b, cfg); err != nil {
			return "", fmt.Errorf("rendering %s: %w", f.path, err)
		}
		if err := os.WriteFile(filepath.Join(cfg.Dir, f.path), []byte(b.String()), 0o644); err != nil {
			return "", fmt.Errorf("writing %s: %w", f.path, err)
		}
	}
	// Pods resolve through the cluster DNS only: the node's resolver points
	// at nothing, so no lookup leaves the machine.
	if err := os.WriteFile(filepath.Join(cfg.Dir, "resolv.conf"), []byte("nameserver 127.0.0.1\n"), 0o644); err != nil {
		return "", fmt.Errorf("writing the node's resolv.conf: %w", err)
	}
	spec := nodeinit.Spec{
		Cgroup:      cfg.Cgroup,
		NetNS:       cfg.NetNS,
		PrivateDirs: []string{"/var/log/containers", "/var/lib/cni", "/run/netns"},
		ReadyFile:   filepath.Join(cfg.Dir, "ready"),
		Processes: []nodeinit.Process{
			{Name: "containerd", Path: filepath.Join(cfg.Bin, "containerd"),
				Args: []string{"--config", filepath.Join(cfg.Dir, "containerd/config.toml")},
				Log:  filepath.Join(cfg.Dir, "containerd.log"), ReadyFile: cfg.Socket},
			{Name: "kubelet", Path: filepath.Join(cfg.Bin, "kubelet"),
				Args: []string{"--config=" + filepath.Join(cfg.Dir, "kubelet/config.yaml"),
					"--kubeconfig=" + cfg.KubeletKubeconfig, "--hostname-override=" + cfg.Name,
					"--node-ip=" + cfg.NodeIP, "--root-dir=" + filepath.Join(cfg.Dir, "kubelet"), "--v=2"},
				Log: filepath.Join(cfg.Dir, "kubelet.log"), ReadyURL: "http://127.0.0.1:10248/healthz",
				ReadyTimeout: nodeinit.Duration{Duration: 2 * time.Minute}},
			{Name: "kube-proxy", Path: filepath.Join(cfg.Bin, "kube-proxy"),
				Args: []string{"--config=" + filepath.Join(cfg.Dir, "kube-proxy.yaml"), "--v=2"},
				Log:  filepath.Join(cfg.Dir, "kube-proxy.log")},
		},
	}
	raw, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encoding the node spec: %w", err)
	}
	path := filepath.Join(cfg.Dir, "node.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// startNode runs ballast-node with spec and waits until every daemon of the
// node is ready.
func startNode(ctx context.Context, bin, dir, spec string) (*process, error) {
	// containerd finds its shim on PATH.
	env := append(os.Environ(), "PATH="+bin+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	p, err := startProcess("ballast-node", filepath.Join(dir, "ballast-node.log"), filepath.Join(bin, "ballast-node"), env, spec)
	if err != nil {
		return nil, err
	}
	ready := filepath.Join(dir, "ready")
	err = waitFor(ctx, "the node's containerd, kubelet and kube-proxy", 3*time.Minute, func(context.Context) (bool, error) {
		if gone, err := p.exited(); gone {
			return false, err
		}
		_, err := os.Stat(ready)
		return err == nil, nil
	})
	return p, err
}

// memTotal is the machine's memory, which the kubelet reports as the node's
// capacity.
func memTotal() (int64, error) { return meminfo("MemTotal") }

// meminfo reads field (MemTotal, MemAvailable) of /proc/meminfo, in bytes.
func meminfo(field string) (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("reading /proc/meminfo: %w", err)
	}
	defer f.Close()
	v, err := parseMeminfo(f, field)
	if err != nil {
		return 0, fmt.Errorf("reading /proc/meminfo: %w", err)
	}
	return v, nil
}

// parseMeminfo reads field of a /proc/meminfo, in bytes.
func parseMeminfo(r io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == field+":" {
			kib, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil || kib < 0 || kib > math.MaxInt64/1024 {
				return 0, fmt.Errorf("%s is %q, not a size in KiB", field, fields[1])
			}
			return kib * 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s", field)
}

// kernelTunables are the host settings the kubelet changes when it starts
// (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops) and the one the
// lane changes for more than one node (IPv4 forwarding); the lane puts them
// back when it stops.
var kernelTunables = []string{"/proc/sys/vm/overcommit_memory", "/proc/sys/kernel/panic", "/proc/sys/kernel/panic_on_oops", ipForward}

func saveTunables() map[string][]byte {
	saved := map[string][]byte{}
	for _, f := range kernelTunables {
		if v, err := os.ReadFile(f); err == nil {
			saved[f] = v
		}
	}
	return saved
}

func restoreTunables(saved map[string][]byte) error {
	var errs []string
	for f, v := range saved {
		if err := os.WriteFile(f, v, 0o644); err != nil {
			errs = append(errs, err.Error())
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("restoring kernel settings: %s", strings.Join(errs, "; "))
	}
	return nil
}
