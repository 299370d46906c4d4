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
	// hostIP is the host's end of the first node's link, where the API
	// server listens.
	hostIP      = "10.213.0.1"
	linkPrefix  = 24
	clusterCIDR = "10.244.0.0/16"
	// linkCIDR holds every node's link.
	linkCIDR    = "10.213.0.0/16"
	serviceCIDR = "10.96.0.0/16"
	// kubernetesServiceIP is the first address of serviceCIDR, which the API
	// server gives the kubernetes Service.
	kubernetesServiceIP = "10.96.0.1"
	// dnsServiceIP is the cluster DNS the kubelet hands pods.
	dnsServiceIP  = "10.96.0.10"
	apiServerPort = 6443
)

// nodeAddrs are one node's addresses: its link (host and node ends) and its
// pods' range, the i-th of each.
type nodeAddrs struct {
	hostIP, nodeIP, podCIDR, podGateway string
}

func addrsOf(i int) nodeAddrs {
	return nodeAddrs{
		hostIP: fmt.Sprintf("10.213.%d.1", i), nodeIP: fmt.Sprintf("10.213.%d.2", i),
		podCIDR: fmt.Sprintf("10.244.%d.0/24", i), podGateway: fmt.Sprintf("10.244.%d.1", i),
	}
}

// network names the node's namespace and the host's end of its link.
type network struct {
	netns    string // name under /run/netns
	hostLink string
	addrs    nodeAddrs
}

func (n network) nsPath() string { return "/run/netns/" + n.netns }

// setUp creates the node's namespace and link, addresses both ends, lets the
// node forward between its link and the pod bridge, routes the node's pod
// range from the host to the node (the API server reaches metrics-server's
// pod) and every other node's link and pods from the node through the host.
func (n network) setUp() error {
	nodeLink := n.hostLink + "n"
	steps := [][]string{
		{"ip", "netns", "add", n.netns},
		{"ip", "link", "add", n.hostLink, "type", "veth", "peer", "name", nodeLink, "netns", n.netns},
		{"ip", "addr", "add", fmt.Sprintf("%s/%d", n.addrs.hostIP, linkPrefix), "dev", n.hostLink},
		{"ip", "link", "set", n.hostLink, "up"},
		{"ip", "-n", n.netns, "link", "set", nodeLink, "name", "eth0"},
		{"ip", "-n", n.netns, "addr", "add", fmt.Sprintf("%s/%d", n.addrs.nodeIP, linkPrefix), "dev", "eth0"},
		{"ip", "-n", n.netns, "link", "set", "eth0", "up"},
		{"ip", "-n", n.netns, "link", "set", "lo", "up"},
		{"nsenter", "--net=" + n.nsPath(), "--", "sysctl", "-qw", "net.ipv4.ip_forward=1"},
		// Pods reaching a Service whose endpoint is on the same bridge need
		// bridged replies to pass iptables, or kube-proxy's DNAT is not undone.
		{"nsenter", "--net=" + n.nsPath(), "--", "sysctl", "-qw", "net.bridge.bridge-nf-call-iptables=1"},
		{"ip", "route", "add", n.addrs.podCIDR, "via", n.addrs.nodeIP, "dev", n.hostLink},
		{"ip", "-n", n.netns, "route", "add", linkCIDR, "via", n.addrs.hostIP},
		{"ip", "-n", n.netns, "route", "add", clusterCIDR, "via", n.addrs.hostIP},
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
		// Deleting the namespace deletes the pair too, a moment later.
		if err := run("ip", "link", "del", n.hostLink); err != nil {
			if _, still := net.InterfaceByName(n.hostLink); still == nil {
				return err
			}
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

// forwardRules accept, first in the host's FORWARD chain, what the nodes of
// a lane send each other through the host.
var forwardRules = [][]string{
	{"FORWARD", "-s", linkCIDR, "-m", "comment", "--comment", "ballast-e2e", "-j", "ACCEPT"},
	{"FORWARD", "-d", linkCIDR, "-m", "comment", "--comment", "ballast-e2e", "-j", "ACCEPT"},
	{"FORWARD", "-s", clusterCIDR, "-m", "comment", "--comment", "ballast-e2e", "-j", "ACCEPT"},
	{"FORWARD", "-d", clusterCIDR, "-m", "comment", "--comment", "ballast-e2e", "-j", "ACCEPT"},
}

// allowForwarding inserts (on) or deletes (off) forwardRules, each once.
func allowForwarding(on bool) error {
	for _, r := range forwardRules {
		present := exec.Command("iptables", append([]string{"-C"}, r...)...).Run() == nil
		switch {
		case on && !present:
			if err := run(append([]string{"iptables", "-I"}, r...)...); err != nil {
				return fmt.Errorf("letting the host forward the lane's traffic: %w", err)
			}
		case !on && present:
			if err := run(append([]string{"iptables", "-D"}, r...)...); err != nil {
				return err
			}
		}
	}
	return nil
}
