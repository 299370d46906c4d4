package prometheus

import (
	"net"
	"strings"

	"github.com/prometheus/common/model"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// nodeIndex finds the Kubernetes node a series belongs to.
type nodeIndex struct {
	byName map[string]*provider.Node
	byIP   map[string]*provider.Node
}

func newNodeIndex(nodes []provider.Node) nodeIndex {
	idx := nodeIndex{
		byName: make(map[string]*provider.Node, len(nodes)),
		byIP:   make(map[string]*provider.Node, len(nodes)),
	}
	for i := range nodes {
		n := &nodes[i]
		idx.byName[n.Name] = n
		if ip := canonicalIP(n.InternalIP); ip != "" {
			idx.byIP[ip] = n
		}
	}
	return idx
}

// lookup maps a series to a node: its `node` label, else `instance` equal
// to a node name, else the host of `instance` equal to a node name or a
// node's InternalIP.
func (idx nodeIndex) lookup(m model.Metric) (*provider.Node, bool) {
	if name := string(m["node"]); name != "" {
		if n, ok := idx.byName[name]; ok {
			return n, true
		}
	}
	instance := string(m["instance"])
	if instance == "" {
		return nil, false
	}
	if n, ok := idx.byName[instance]; ok {
		return n, true
	}
	host := instanceHost(instance)
	if n, ok := idx.byName[host]; ok {
		return n, true
	}
	if ip := canonicalIP(host); ip != "" {
		if n, ok := idx.byIP[ip]; ok {
			return n, true
		}
	}
	return nil, false
}

// instanceHost strips the port and IPv6 brackets from an instance label:
// "10.0.0.5:9100" → "10.0.0.5", "[fd00::5]:9100" → "fd00::5".
func instanceHost(instance string) string {
	if host, _, err := net.SplitHostPort(instance); err == nil {
		return host
	}
	return strings.TrimSuffix(strings.TrimPrefix(instance, "["), "]")
}

// canonicalIP returns ip in canonical form, or "" when it is not an IP.
func canonicalIP(ip string) string {
	parsed := net.ParseIP(ip)
	if parsed == nil {
		return ""
	}
	return parsed.String()
}
