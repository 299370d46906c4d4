package scenario

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Scenario is one simulated cluster and what happens to it.
type Scenario struct {
	// Name identifies the scenario in reports.
	Name string `json:"name"`
	// Description says what the scenario shows.
	Description string `json:"description,omitempty"`
	// Duration is how much simulated time the scenario covers.
	Duration metav1.Duration `json:"duration"`
	// Step is the simulated time between two usage samples; default 15s.
	Step metav1.Duration `json:"step,omitempty"`
	// Seed makes noisy usage reproducible; default 1.
	Seed int64 `json:"seed,omitempty"`
	// Nodes are the cluster's nodes, including those that join later.
	Nodes []Node `json:"nodes"`
	// Workloads are the Deployments, DaemonSets, StatefulSets and CronJobs
	// created at the start, and the Jobs created at their Start.
	Workloads []Workload `json:"workloads"`
	// Events happen at given simulated times.
	Events []Event `json:"events,omitempty"`
	// Target is what Ballast is expected to achieve here; `bench-balance
	// -check` fails a scenario that misses it. Without one, Ballast is
	// expected to spread usage less than the default scheduler.
	Target *Target `json:"target,omitempty"`
}

// Target states what Ballast must achieve on a scenario. Whatever the
// target, Ballast must also never undo its own moves while nothing changed
// (no loop), bring
// a node over a scheduler threshold back under it within HotCycles
// descheduling cycles, and evict at most 1.5× the fewest pods that would
// bring the hot nodes under the descheduler's high thresholds.
type Target struct {
	// SpreadRatio bounds Ballast's utilisation spread as a multiple of the
	// default scheduler's (0.5: at most half), and Ballast must also do no
	// worse than the best peer stack measured beside it. Zero skips it.
	SpreadRatio float64 `json:"spreadRatio,omitempty"`
	// SpreadOverOracle bounds Ballast's utilisation spread by the best
	// placement possible (the oracle of bench-balance): at most this many
	// points above the oracle's spread. Zero skips it.
	SpreadOverOracle float64 `json:"spreadOverOracle,omitempty"`
	// NoPodsOnHog: no pod is placed on a node while a process outside
	// Kubernetes eats it.
	NoPodsOnHog bool `json:"noPodsOnHog,omitempty"`
	// EvenReplicas: at the end, every workload's replicas differ by at most
	// one between the schedulable nodes.
	EvenReplicas bool `json:"evenReplicas,omitempty"`
	// MaxEvictions bounds the evictions of the whole run when set (0: a
	// scenario where moving pods only churns them).
	MaxEvictions *int32 `json:"maxEvictions,omitempty"`
	// HotCycles bounds how many descheduling cycles a node may stay over a
	// scheduler threshold; default 3.
	HotCycles int32 `json:"hotCycles,omitempty"`
	// Growing names the workloads whose memory keeps growing: the
	// descheduler must report these (MemoryGrowing) and no other. A
	// scenario without it expects no pod reported growing.
	Growing []string `json:"growing,omitempty"`
}

// Node is a simulated node.
type Node struct {
	// Name is the node name.
	Name string `json:"name"`
	// CPU is the allocatable CPU ("4", "3500m").
	CPU resource.Quantity `json:"cpu"`
	// Memory is the allocatable memory ("8Gi").
	Memory resource.Quantity `json:"memory"`
	// Pods is the allocatable pod count; default 110.
	Pods int64 `json:"pods,omitempty"`
	// Arch is the kubernetes.io/arch label; default amd64.
	Arch string `json:"arch,omitempty"`
	// Role is a free-form node-role label value (server, agent …).
	Role string `json:"role,omitempty"`
	// Labels are extra node labels.
	Labels map[string]string `json:"labels,omitempty"`
	// Background is usage outside the workloads (the OS, k3s itself).
	Background Resources `json:"background,omitempty"`
	// Absent keeps the node out of the cluster until a join event.
	Absent bool `json:"absent,omitempty"`
	// Unschedulable starts the node cordoned.
	Unschedulable bool `json:"unschedulable,omitempty"`
}

// Resources is an amount of CPU and memory.
type Resources struct {
	CPU    resource.Quantity `json:"cpu,omitempty"`
	Memory resource.Quantity `json:"memory,omitempty"`
}

// WorkloadKind is the controller of a workload's pods.
type WorkloadKind string

const (
	// Deployment runs Replicas pods wherever the scheduler puts them; the
	// descheduler may move them.
	Deployment WorkloadKind = "Deployment"
	// DaemonSet runs one pod on every node its NodeSelector matches, cordoned
	// or not, from the moment the node is there: load on every node that
	// nothing moves (node-exporter, a log shipper, a CNI agent).
	DaemonSet WorkloadKind = "DaemonSet"
	// StatefulSet runs Replicas pods, each with a volume of the cluster's
	// local-path class (k3s's default storage) that lives on one node: the
	// node of VolumeNodes for its ordinal, else the node its pod is first
	// placed on. Its pods never run anywhere else (a database, Home
	// Assistant): nothing moves them, a replacement goes back to its
	// volume's node, and waits there, Pending, while that node is down or
	// cordoned.
	StatefulSet WorkloadKind = "StatefulSet"
	// Job runs Parallelism pods once, from Start; each ends, Succeeded,
	// RunFor after it started (a media scan, a migration).
	Job WorkloadKind = "Job"
	// CronJob runs a Job at every time of its Schedule (a backup).
	CronJob WorkloadKind = "CronJob"
)

// WorkloadKinds are the kinds a workload may have.
var WorkloadKinds = []WorkloadKind{Deployment, DaemonSet, StatefulSet, Job, CronJob}

// ConcurrencyPolicy says what a CronJob does when a run is due while the
// last one still runs, as Kubernetes' field of that name.
type ConcurrencyPolicy string

const (
	// AllowConcurrent starts the new run beside the old (the default).
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// ForbidConcurrent skips the new run.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// ReplaceConcurrent stops the old run and starts the new.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// Workload is a Deployment, DaemonSet, StatefulSet, Job or CronJob whose
// pods all follow one usage profile.
type Workload struct {
	// Name is the workload's name.
	Name string `json:"name"`
	// Kind is Deployment (the default), DaemonSet, StatefulSet, Job or
	// CronJob.
	Kind WorkloadKind `json:"kind,omitempty"`
	// Namespace defaults to "default".
	Namespace string `json:"namespace,omitempty"`
	// Replicas at the start of a Deployment or StatefulSet; a DaemonSet
	// has none of its own (one pod per matching node), a Job or CronJob
	// runs Parallelism pods.
	Replicas int32 `json:"replicas"`
	// Requests of each pod.
	Requests Resources `json:"requests,omitempty"`
	// Limits of each pod.
	Limits Resources `json:"limits,omitempty"`
	// Usage is the real usage of each pod over time, in scenario time as
	// every workload's (a Job's too, whenever it runs).
	Usage Usage `json:"usage"`
	// NodeSelector restricts the pods to matching nodes.
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// VolumeNodes are, for a StatefulSet, the nodes its replicas' volumes
	// already live on, by ordinal (the first is replica 0's); a replica
	// past the list gets its volume on the node it is first placed on.
	VolumeNodes []string `json:"volumeNodes,omitempty"`

	// Parallelism is how many pods each run of a Job or CronJob starts,
	// each running once; default 1.
	Parallelism int32 `json:"parallelism,omitempty"`
	// RunFor is how long each pod of a Job or CronJob runs once started.
	RunFor metav1.Duration `json:"runFor,omitempty"`
	// Start is when a Job is created; default the scenario's start.
	Start metav1.Duration `json:"start,omitempty"`
	// Schedule is when a CronJob starts a run, in cron syntax (five
	// fields, minute first, or a descriptor such as @hourly) on the
	// scenario's own calendar: it starts at midnight (ScheduleEpoch), so
	// "*/10 * * * *" runs at 10m, 20m, … of the scenario.
	Schedule string `json:"schedule,omitempty"`
	// ConcurrencyPolicy is what a CronJob does when a run is due while the
	// last still runs: Allow (default), Forbid or Replace.
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
}

// IsDaemonSet reports whether w runs a pod per matching node.
func (w Workload) IsDaemonSet() bool { return w.Kind == DaemonSet }

// IsStatefulSet reports whether w's pods are pinned by their volumes.
func (w Workload) IsStatefulSet() bool { return w.Kind == StatefulSet }

// RunsToCompletion reports whether w's pods end by themselves (a Job's or
// a CronJob's).
func (w Workload) RunsToCompletion() bool { return w.Kind == Job || w.Kind == CronJob }

// Scalable reports whether a scale event may set w's replicas.
func (w Workload) Scalable() bool { return w.Kind == Deployment || w.Kind == StatefulSet }

// Movable reports whether anything may move w's pods once placed: only a
// Deployment's may be.
func (w Workload) Movable() bool { return w.Kind == Deployment }

// Usage gives a profile per resource.
type Usage struct {
	CPU    Profile `json:"cpu"`
	Memory Profile `json:"memory"`
}

// ProfileType names a shape of usage over time.
type ProfileType string

const (
	// Constant uses Value all the time.
	Constant ProfileType = "constant"
	// Ramp goes linearly from From to To between Start and Start+Over.
	Ramp ProfileType = "ramp"
	// Spike uses Value, and Peak from At for For.
	Spike ProfileType = "spike"
	// Noisy draws from a normal distribution around Value with Stddev,
	// reproducibly for a scenario seed.
	Noisy ProfileType = "noisy"
	// Wave swings around Value by Amplitude, up first, once every Period
	// (a sine): a load that comes and goes, like a day's traffic or a
	// backup's, sped up.
	Wave ProfileType = "wave"
)

// Profile is the usage of one resource over simulated time. Times are from
// the start of the scenario.
type Profile struct {
	Type   ProfileType       `json:"type"`
	Value  resource.Quantity `json:"value,omitempty"`
	From   resource.Quantity `json:"from,omitempty"`
	To     resource.Quantity `json:"to,omitempty"`
	Start  metav1.Duration   `json:"start,omitempty"`
	Over   metav1.Duration   `json:"over,omitempty"`
	Peak   resource.Quantity `json:"peak,omitempty"`
	At     metav1.Duration   `json:"at,omitempty"`
	For    metav1.Duration   `json:"for,omitempty"`
	Stddev resource.Quantity `json:"stddev,omitempty"`
	// Amplitude and Period shape a wave.
	Amplitude resource.Quantity `json:"amplitude,omitempty"`
	Period    metav1.Duration   `json:"period,omitempty"`
}

// EventType names something that happens to the cluster.
type EventType string

const (
	// Join adds an absent node to the cluster.
	Join EventType = "join"
	// Cordon marks a node unschedulable.
	Cordon EventType = "cordon"
	// Uncordon marks a node schedulable.
	Uncordon EventType = "uncordon"
	// Hog starts a process outside Kubernetes that uses Resources on a node,
	// for For (until the end when zero).
	Hog EventType = "hog"
	// Scale sets a workload's replicas.
	Scale EventType = "scale"
	// RestartDescheduler restarts Ballast's descheduler, or hands it to
	// another replica: what its process remembered is gone, what it keeps in
	// the cluster is not. It changes nothing in the cluster, so a move undone
	// after it is a loop. A run without Ballast ignores it.
	RestartDescheduler EventType = "restart-descheduler"
	// Reboot takes a node down for For: it stops reporting (NotReady, its
	// usage gone from the metrics API) and is tainted unreachable as the
	// node lifecycle controller does; after the pods' toleration of that
	// (PodEvictionTimeout) its pods other than DaemonSets' are deleted and
	// recreated elsewhere, and it comes back empty of them.
	Reboot EventType = "reboot"
	// PowerLoss takes a node down as a reboot does, for good.
	PowerLoss EventType = "power-loss"
	// Drain cordons a node and evicts its pods other than DaemonSets', as
	// kubectl drain does: through the Eviction API, PodDisruptionBudgets
	// respected.
	Drain EventType = "drain"
)

// PodEvictionTimeout is how long the pods on a node that stopped reporting
// stay bound to it: Kubernetes' default toleration of the unreachable
// taint (the DefaultTolerationSeconds admission plugin's 300 s).
const PodEvictionTimeout = 5 * time.Minute

// Event is something that happens at a simulated time.
type Event struct {
	At       metav1.Duration `json:"at"`
	Type     EventType       `json:"type"`
	Node     string          `json:"node,omitempty"`
	Workload string          `json:"workload,omitempty"`
	Replicas int32           `json:"replicas,omitempty"`
	// Resources is what a hog uses.
	Resources Resources `json:"resources,omitempty"`
	// For is how long a hog runs (until the end when zero) or a rebooting
	// node stays down.
	For metav1.Duration `json:"for,omitempty"`
}
