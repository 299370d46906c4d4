package health

import (
	"fmt"
	"time"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// noFreshUsage is the problem of a load-watcher that serves no fresh node.
const noFreshUsage = "no node has fresh usage: Ballast's scheduler places every pod by its requests and the descheduler evicts nothing"

// Status is a Report as one document, what `ballast status -o json|yaml`
// prints: what the table shows, with lowerCamelCase field names scripts may
// rely on.
type Status struct {
	// Healthy is true when Problems is empty; status then exits zero.
	Healthy bool `json:"healthy"`
	// Problems say what makes the installation unhealthy.
	Problems   []string          `json:"problems"`
	Namespace  string            `json:"namespace"`
	Time       time.Time         `json:"time"`
	Components []ComponentStatus `json:"components"`
	// OptIn describes the namespace opt-in policy.
	OptIn       string            `json:"optIn,omitempty"`
	LoadWatcher LoadWatcherStatus `json:"loadWatcher"`
	// Nodes are the rows of the usage table, by name.
	Nodes []NodeStatus `json:"nodes"`
	// K3sServers is set when the cluster's nodes carry k3s's server labels.
	K3sServers *ServersStatus `json:"k3sServers,omitempty"`
	// GrowingPods are the pods whose memory keeps growing.
	GrowingPods      []GrowingStatus `json:"growingPods"`
	GrowingPodsError string          `json:"growingPodsError,omitempty"`
	// HelmController says where k3s's helm-controller is, on a k3s server
	// whose Ballast is not healthy.
	HelmController string `json:"helmController,omitempty"`
	// Kubeconfigs are those `ballast kubeconfig` generated for components
	// run outside the cluster; KubeconfigsError says why they could not be
	// read.
	Kubeconfigs      []KubeconfigStatus `json:"kubeconfigs"`
	KubeconfigsError string             `json:"kubeconfigsError,omitempty"`
	// Warnings do not make Ballast unhealthy: a kubeconfig whose token
	// ends within a week, with the command that renews it.
	Warnings []string `json:"warnings"`
}

// ComponentStatus is one Deployment.
type ComponentStatus struct {
	Name      string `json:"name"`
	Installed bool   `json:"installed"`
	Ready     bool   `json:"ready"`
	Replicas  int32  `json:"replicas"`
	Available int32  `json:"available"`
}

// LoadWatcherStatus is how load-watcher was reached and what it serves.
type LoadWatcherStatus struct {
	// Reachable says whether its usage could be read.
	Reachable bool `json:"reachable"`
	// Via is how it was reached: a port-forward to its pod or the API
	// server's service proxy.
	Via string `json:"via,omitempty"`
	// Error says why its usage could not be read.
	Error string `json:"error,omitempty"`
	// Readiness is what its /readyz answered.
	Readiness *Readiness `json:"readiness,omitempty"`
	// Source is its usage provider (metrics-server, prometheus).
	Source string `json:"source,omitempty"`
	// Window is the statistics window the node usage is read from.
	Window string `json:"window,omitempty"`
	// Statistics names what cpuPercent and memoryPercent are, by resource.
	Statistics map[string]string `json:"statistics,omitempty"`
	// FreshNodes counts the nodes whose usage the scheduler trusts.
	FreshNodes int `json:"freshNodes"`
	// NewestSampleAgeSeconds is the age of the newest sample of any node.
	NewestSampleAgeSeconds *float64 `json:"newestSampleAgeSeconds,omitempty"`
	// Port, TLS and StaleAfterSeconds are the release's settings
	// status used, read from SettingsFrom.
	Port              int     `json:"port"`
	TLS               bool    `json:"tls"`
	StaleAfterSeconds float64 `json:"staleAfterSeconds"`
	SettingsFrom      string  `json:"settingsFrom,omitempty"`
}

// NodeStatus is one node's usage, in percent of allocatable.
type NodeStatus struct {
	Name          string   `json:"name"`
	CPUPercent    *float64 `json:"cpuPercent,omitempty"`
	MemoryPercent *float64 `json:"memoryPercent,omitempty"`
	// SampleAgeSeconds is the age of the newest sample; unset when there is
	// none.
	SampleAgeSeconds *float64 `json:"sampleAgeSeconds,omitempty"`
	// Fresh says whether the scheduler trusts the usage.
	Fresh bool `json:"fresh"`
	// State is what the scheduler does instead when it does not.
	State string `json:"state,omitempty"`
}

// ServersStatus are the k3s servers.
type ServersStatus struct {
	// Error says why they could not be read.
	Error string `json:"error,omitempty"`
	// SchedulerLeaseHolder holds the embedded kube-scheduler's lease.
	SchedulerLeaseHolder string         `json:"schedulerLeaseHolder,omitempty"`
	Servers              []ServerStatus `json:"servers,omitempty"`
}

// ServerStatus is one k3s server.
type ServerStatus struct {
	Node string `json:"node"`
	// Scheduler is the state of its embedded scheduler: converted, not
	// converted, no embedded scheduler, unknown.
	Scheduler string `json:"scheduler"`
	// Description is what the table says of it.
	Description string `json:"description"`
	ThisHost    bool   `json:"thisHost"`
}

// GrowingStatus is a pod whose memory keeps growing.
type GrowingStatus struct {
	Namespace string    `json:"namespace"`
	Pod       string    `json:"pod"`
	Growth    string    `json:"growth"`
	Warned    time.Time `json:"warned"`
}

// Problems say what makes the installation unhealthy: a component
// installed but not ready, usage that could not be read or of no node fresh.
func (r Report) Problems() []string {
	problems := []string{}
	for _, c := range r.Components {
		if c.Found && !c.Ready {
			problems = append(problems, fmt.Sprintf("%s is not ready (%d/%d available)", c.Name, c.Available, c.Replicas))
		}
	}
	switch {
	case r.Usage == nil:
		problems = append(problems, fmt.Sprintf("usage unavailable: %v", r.UsageErr))
	case r.Usage.fresh() == 0:
		problems = append(problems, noFreshUsage)
	}
	return problems
}

// Healthy reports whether every installed component is ready and
// load-watcher serves fresh usage of at least one node.
func (r Report) Healthy() bool { return len(r.Problems()) == 0 }

// Status returns the report as one document.
func (r Report) Status() Status {
	problems := r.Problems()
	s := Status{
		Healthy:        len(problems) == 0,
		Problems:       problems,
		Namespace:      r.Namespace,
		Time:           r.Now.UTC(),
		OptIn:          r.OptIn,
		Components:     []ComponentStatus{},
		Nodes:          []NodeStatus{},
		GrowingPods:    []GrowingStatus{},
		HelmController: r.HelmController,
		LoadWatcher:    r.loadWatcherStatus(),
		Kubeconfigs:    r.kubeconfigStatus(),
		Warnings:       r.Warnings(),
	}
	if r.KubeconfigsErr != nil {
		s.KubeconfigsError = r.KubeconfigsErr.Error()
	}
	for _, c := range r.Components {
		s.Components = append(s.Components, ComponentStatus{Name: c.Name, Installed: c.Found, Ready: c.Ready, Replicas: c.Replicas, Available: c.Available})
	}
	if r.Usage != nil {
		for _, row := range r.Usage.Rows(r.Now) {
			s.Nodes = append(s.Nodes, nodeStatus(row))
		}
	}
	switch {
	case r.ServersErr != nil:
		s.K3sServers = &ServersStatus{Error: r.ServersErr.Error()}
	case r.Servers != nil:
		s.K3sServers = serversStatus(*r.Servers, r.LocalDropIn)
	}
	if r.GrowingErr != nil {
		s.GrowingPodsError = r.GrowingErr.Error()
	}
	for _, g := range r.Growing {
		s.GrowingPods = append(s.GrowingPods, GrowingStatus{Namespace: g.Namespace, Pod: g.Pod, Growth: g.Note, Warned: g.Seen.UTC()})
	}
	return s
}

func (r Report) loadWatcherStatus() LoadWatcherStatus {
	staleAfter := r.LoadWatcher.StaleAfter
	if staleAfter == 0 {
		staleAfter = client.DefaultStaleAfter
	}
	lw := LoadWatcherStatus{
		Reachable: r.Usage != nil, Via: r.UsageVia, Readiness: r.Readiness,
		Port: r.LoadWatcher.Port, TLS: r.LoadWatcher.TLS, StaleAfterSeconds: staleAfter.Seconds(), SettingsFrom: r.LoadWatcher.From,
	}
	if r.Usage == nil {
		if r.UsageErr != nil {
			lw.Error = r.UsageErr.Error()
		}
		return lw
	}
	lw.Source = r.Usage.Snapshot.Source
	lw.Window = r.Usage.Window.String()
	lw.Statistics = map[string]string{}
	for _, res := range []usage.Resource{usage.CPU, usage.Memory} {
		lw.Statistics[string(res)] = statisticLabel(res, r.Usage.Window)
	}
	lw.FreshNodes = r.Usage.fresh()
	for _, n := range r.Usage.Snapshot.Nodes {
		age := r.Now.Sub(n.SampleTime).Seconds()
		if lw.NewestSampleAgeSeconds == nil || age < *lw.NewestSampleAgeSeconds {
			lw.NewestSampleAgeSeconds = &age
		}
	}
	return lw
}

func nodeStatus(row NodeRow) NodeStatus {
	n := NodeStatus{Name: row.Node, Fresh: row.State == "", State: row.State}
	if row.HasCPU {
		n.CPUPercent = &row.CPU
	}
	if row.HasMemory {
		n.MemoryPercent = &row.Memory
	}
	if row.Sampled >= 0 {
		age := row.Sampled.Seconds()
		n.SampleAgeSeconds = &age
	}
	return n
}

func serversStatus(cl k3s.Cluster, dropIn bool) *ServersStatus {
	s := &ServersStatus{SchedulerLeaseHolder: cl.Leader}
	for _, srv := range cl.Servers {
		s.Servers = append(s.Servers, ServerStatus{Node: srv.Node, Scheduler: string(srv.Scheduler),
			Description: cl.Describe(srv, dropIn), ThisHost: srv.Node == cl.Local})
	}
	return s
}
