package k3s

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// What k3s records on the Node of each server.
const (
	// LabelControlPlane and LabelMaster are set on every server running an API server.
	LabelControlPlane = "node-role.kubernetes.io/control-plane"
	LabelMaster       = "node-role.kubernetes.io/master"
	// LabelEtcd is set on every server running etcd.
	LabelEtcd = "node-role.kubernetes.io/etcd"
	// NodeArgsAnnotation holds, as a JSON list, the arguments k3s last
	// started with: its command line followed by config.yaml and every
	// config.yaml.d drop-in, each "--flag=value" split into "--flag" and "value".
	NodeArgsAnnotation = "k3s.io/node-args"
)

// SchedulerLease is the lease the embedded kube-schedulers of all servers
// elect their leader on: only the holder schedules.
const (
	SchedulerLeaseNamespace = "kube-system"
	SchedulerLeaseName      = "kube-scheduler"
)

// SchedulerState is what a server's embedded kube-scheduler serves, as k3s
// last started it (the node-args annotation), not as its files are now.
type SchedulerState string

const (
	// SchedulerConverted means k3s started with Ballast's drop-in: the
	// embedded scheduler serves only the bootstrap profile.
	SchedulerConverted SchedulerState = "converted"
	// SchedulerDefault means k3s started without the drop-in: the embedded
	// scheduler serves default-scheduler.
	SchedulerDefault SchedulerState = "not converted"
	// SchedulerDisabled means k3s started with --disable-scheduler: this
	// server runs no embedded scheduler and needs no drop-in.
	SchedulerDisabled SchedulerState = "no embedded scheduler"
	// SchedulerUnknown means the node carries no readable node-args annotation.
	SchedulerUnknown SchedulerState = "unknown"
)

// Server is one k3s server as its Node shows it.
type Server struct {
	Node      string
	Scheduler SchedulerState
	// Detail says why Scheduler is SchedulerUnknown.
	Detail string
}

// IsServer reports whether n is a k3s server: k3s labels every server with
// its control-plane and etcd roles.
func IsServer(n *corev1.Node) bool {
	for _, l := range []string{LabelControlPlane, LabelMaster, LabelEtcd} {
		if _, ok := n.Labels[l]; ok {
			return true
		}
	}
	return false
}

// Servers returns the servers among nodes, sorted by name, with the state
// of their embedded scheduler.
func Servers(nodes []corev1.Node) []Server {
	var out []Server
	for i := range nodes {
		n := &nodes[i]
		if !IsServer(n) {
			continue
		}
		s := Server{Node: n.Name}
		raw, ok := n.Annotations[NodeArgsAnnotation]
		var args []string
		switch {
		case !ok:
			s.Scheduler, s.Detail = SchedulerUnknown, "no "+NodeArgsAnnotation+" annotation"
		case json.Unmarshal([]byte(raw), &args) != nil:
			s.Scheduler, s.Detail = SchedulerUnknown, NodeArgsAnnotation+" is not a JSON list of strings"
		default:
			s.Scheduler = schedulerState(args)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

// bootstrapConfigSuffix ends the path of the bootstrap scheduler config
// under any k3s data directory.
const bootstrapConfigSuffix = "/server/ballast/bootstrap-scheduler.yaml"

// schedulerState reads a server's k3s arguments: a kube-scheduler "config="
// argument naming Ballast's bootstrap config means converted.
func schedulerState(args []string) SchedulerState {
	state := SchedulerDefault
	for i, a := range args {
		next := ""
		if i+1 < len(args) {
			next = args[i+1]
		}
		switch a {
		case "--disable-scheduler":
			// From a config file the value follows; on the command line it may not.
			if next != "false" {
				return SchedulerDisabled
			}
		case "--kube-scheduler-arg":
			if strings.HasPrefix(next, "config=") && strings.HasSuffix(next, bootstrapConfigSuffix) {
				state = SchedulerConverted
			}
		}
	}
	return state
}

// SchedulerLeader returns the host whose embedded kube-scheduler holds the
// shared lease, "" when nobody does. kube-scheduler names itself
// "<hostname>_<id>"; k3s names a node after its hostname unless told otherwise.
func SchedulerLeader(ctx context.Context, client kubernetes.Interface) (string, error) {
	l, err := client.CoordinationV1().Leases(SchedulerLeaseNamespace).Get(ctx, SchedulerLeaseName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read lease %s/%s: %w", SchedulerLeaseNamespace, SchedulerLeaseName, err)
	}
	return leaseHost(l), nil
}

func leaseHost(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	host, _, _ := strings.Cut(*l.Spec.HolderIdentity, "_")
	return strings.ToLower(host)
}
