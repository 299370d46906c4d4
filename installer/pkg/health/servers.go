package health

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// WriteServers lists the k3s servers and what the embedded kube-scheduler of
// each serves, as k3s last started it; dropIn says whether this host has the
// scheduler drop-in written.
func WriteServers(w io.Writer, cl k3s.Cluster, dropIn bool) {
	leader := cl.Leader
	if leader == "" {
		leader = "nobody"
	}
	fmt.Fprintf(w, "k3s servers (embedded kube-scheduler as k3s last started it; lease %s/%s held by %s):\n",
		k3s.SchedulerLeaseNamespace, k3s.SchedulerLeaseName, leader)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tSCHEDULER")
	converted, unconverted := 0, 0
	for _, s := range cl.Servers {
		name := s.Node
		if s.Node == cl.Local {
			name += " (this host)"
		}
		fmt.Fprintf(tw, "%s\t%s\n", name, cl.Describe(s, dropIn))
		switch s.Scheduler {
		case k3s.SchedulerConverted:
			converted++
		case k3s.SchedulerDefault:
			unconverted++
		}
	}
	_ = tw.Flush()
	if converted > 0 && unconverted > 0 {
		fmt.Fprintf(w, "warning: servers are partly converted: whether the lease holder serves default-scheduler depends on which "+
			"server holds it; `sudo ballast install` on a server prints the steps left (docs/k3s.md#several-servers)\n")
	}
}
