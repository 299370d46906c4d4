package lane

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
)

// The lane's addresses. The node is a network namespace joined to the host by
// a veth pair; pods sit on a bridge inside it. Nothing is routed beyond the
// machine: the node has no default route, so a packet for an address the
// lane does not own (an unallocated Service IP, the outside world) is
// refused inside the node instead of leaving it.
const (
	hostIP      = "10.213.0.1"
	nodeIP      = "10.213.0.2"
	linkPrefix  = 24
	podCIDR     = "10.244.0.0/24"
	podGateway  = "10.244.0.1"
	clusterCIDR = "10.244.0.0/16"
	serviceCIDR = "10.96.0.0/16"
	// kubernetesServiceIP is the first address of serviceCIDR, which the API
	// server gives the kubernetes Service.
	kubernetesServiceIP = "10.96.0.1"
	// dnsServiceIP is the cluster DNS the kubelet hands pods.
	dnsServiceIP  = "10.96.0.10"
	apiServerPort = 6443
)

// network names the node's namespace and the host's end of its link.
type network struct {
	netns    string // name under /run/netns
	hostLink string
}

func (n network) nsPath() string { return "/run/netns/" + n.netns }

// setUp creates the node's namespace and link, addresses both ends, lets the
// node forward between its link and the pod bridge, and routes the pod range
// from the host to the node (the API server reaches metrics-server's pod).
func (n network) setUp() error {
	nodeLink := n.hostLink + "n"
	steps := [][]string{
		{"ip", "netns", "add", n.netns},
		{"ip", "link", "add", n.hostLink, "type", "veth", "peer", "name", nodeLink, "netns", n.netns},
		{"ip", "addr", "add", fmt.Sprintf("%s/%d", hostIP, linkPrefix), "dev", n.hostLink},
		{"ip", "link", "set", n.hostLink, "up"},
		{"ip", "-n", n.netns, "link", "set", nodeLink, "name", "eth0"},
		{"ip", "-n", n.netns, "addr", "add", fmt.Sprintf("%s/%d", nodeIP, linkPrefix), "dev", "eth0"},
		{"ip", "-n", n.netns, "link", "set", "eth0", "up"},
		{"ip", "-n", n.netns, "link", "set", "lo", "up"},
		{"nsenter", "--net=" + n.nsPath(), "--", "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		// Pods reaching a Service whose endpoint is on the same bridge need
		// bridged replies to pass iptables, or kube-proxy's DNAT is not undone.
		{"nsenter", "--net=" + n.nsPath(), "--", "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"},
		{"ip", "route", "add", podCIDR, "via", nodeIP, "dev", n.hostLink},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			return err
		}
	}
	return nil
}

// tearDown removes the namespace (with the node's end of the link, the pod
// bridge and every rule inside) and the host's end of the link. It is safe
// on a partly built or absent network.
func (n network) tearDown() error {
	if _, err := os.Stat(n.nsPath()); err == nil {
		if err := run("ip", "netns", "del", n.netns); err != nil {
			return err
		}
	}
	if _, err := net.InterfaceByName(n.hostLink); err == nil {
		if err := run("ip", "link", "del", n.hostLink); err != nil {
			return err
		}
	}
	return nil
}

// run runs a host command and returns its output in the error.
func run(argv ...string) error {
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
