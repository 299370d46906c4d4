package balance

import (
	"k8s.io/component-base/metrics"
)

const metricsSubsystem = "ballast_descheduler"

// Skip reasons, the values of the reason label of skipped candidates.
const (
	SkipNoDestination = "no-destination"
	SkipPDB           = "pdb"
	SkipCooldown      = "cooldown"
	SkipStale         = "stale"
	// SkipInvalid: the load-watcher client refused the node's data as nonsense.
	SkipInvalid       = "invalid"
	SkipLimit         = "limit"
	SkipFiltered      = "filtered"
	SkipEvictionError = "eviction-error"
	// SkipOtherScheduler: the pod is not placed by one of schedulerNames.
	SkipOtherScheduler = "other-scheduler"
	// SkipGrowing: the pod's memory keeps growing; it would heat any node.
	SkipGrowing = "growing"
	// SkipPinned: the pod's volumes keep it on its node (PinnedBy).
	SkipPinned = "pinned"
	// SkipNoRelief: the pod uses next to nothing of the resources its node
	// is over its limits on; moving it would free nothing.
	SkipNoRelief = "no-relief"
)

// SkipReasons are every value of the reason label of skipped candidates.
var SkipReasons = []string{SkipNoDestination, SkipPDB, SkipCooldown, SkipStale, SkipInvalid, SkipLimit, SkipFiltered,
	SkipEvictionError, SkipOtherScheduler, SkipGrowing, SkipNoRelief, SkipPinned}

// Outcomes of a move's replacement, the values of the outcome label of
// moves_landed_total.
const (
	// LandedAsPlanned: the replacement runs on the move's destination.
	LandedAsPlanned = "as-planned"
	// LandedElsewhere: it runs on another node.
	LandedElsewhere = "elsewhere"
)

// Metrics are the plugin's Prometheus metrics. One set serves every plugin
// instance; the binary registers it once with the descheduler's registry.
type Metrics struct {
	// Evictions counts evicted pods by plugin, reason (e.g. hot-memory) and source node.
	Evictions *metrics.CounterVec
	// SurgeMoves counts pods moved by a rollout of their one-replica
	// Deployment rather than evicted, by plugin and source node.
	SurgeMoves *metrics.CounterVec
	// SkippedCandidates counts pods and nodes passed over, by plugin and reason.
	SkippedCandidates *metrics.CounterVec
	// HotNodes is the number of nodes hot after hysteresis in the last cycle.
	HotNodes *metrics.GaugeVec
	// Spread is the cluster's utilisation spread, in points, as the last
	// cycle that planned found it (placement="current") and that of the
	// best placement it found (placement="best").
	Spread *metrics.GaugeVec
	// PingPong counts replacements of moved pods that landed back on the
	// node they were moved off, by plugin and node.
	PingPong *metrics.CounterVec
	// Landed counts replacements of moved pods by where they ran: on the
	// destination the move planned, or elsewhere (outcome).
	Landed *metrics.CounterVec
	// PodUsageEstimated counts eviction candidates whose usage the metrics
	// API did not report, so their requests stood for it, by plugin.
	PodUsageEstimated *metrics.CounterVec
	// MemoryGrowth is, for each pod whose memory keeps growing, how fast,
	// in MiB per minute, by namespace, pod and node.
	MemoryGrowth *metrics.GaugeVec
}

// NewMetrics creates the metrics; they record nothing until registered.
func NewMetrics() *Metrics {
	return &Metrics{
		Evictions: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "evictions_total",
			Help:           "Pods evicted, by plugin, reason and source node.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin", "reason", "node"}),
		SurgeMoves: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "surge_moves_total",
			Help:           "Pods of one-replica Deployments moved by a rollout, their replacement Ready before they stopped, rather than evicted, by plugin and source node.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin", "node"}),
		SkippedCandidates: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "skipped_candidates_total",
			Help:           "Eviction candidates passed over, by plugin and reason (no-destination, pdb, cooldown, stale, invalid, limit, filtered, eviction-error, other-scheduler, growing).",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin", "reason"}),
		HotNodes: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Subsystem:      metricsSubsystem,
			Name:           "hot_nodes",
			Help:           "Nodes hot for at least consecutiveHotCycles cycles in the last cycle, by plugin.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin"}),
		Spread: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Subsystem:      metricsSubsystem,
			Name:           "utilisation_spread_points",
			Help:           "The highest node's utilisation minus the lowest's, in points, as the last plan found it: of the current placement (placement=current) and of the best placement found (placement=best), by plugin.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin", "placement"}),
		PingPong: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "pingpong_total",
			Help:           "Replacements of moved pods that landed back on the node they were moved off within the cooldown, by plugin and node.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin", "node"}),
		Landed: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "moves_landed_total",
			Help:           "Replacements of moved pods seen running, by outcome: as-planned (on the destination the move planned) or elsewhere.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"outcome"}),
		PodUsageEstimated: metrics.NewCounterVec(&metrics.CounterOpts{
			Subsystem:      metricsSubsystem,
			Name:           "pod_usage_estimated_total",
			Help:           "Eviction candidates without usage from metrics.k8s.io, whose requests stood for what moving them frees, by plugin.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"plugin"}),
		MemoryGrowth: metrics.NewGaugeVec(&metrics.GaugeOpts{
			Subsystem:      metricsSubsystem,
			Name:           "pod_memory_growth_mib_per_minute",
			Help:           "How fast the memory of a pod that keeps growing grows, in MiB per minute, by namespace, pod and node; such pods are not moved. Pods that do not grow have no series.",
			StabilityLevel: metrics.ALPHA,
		}, []string{"namespace", "pod", "node"}),
	}
}

// startPlugin creates plugin's counters whose labels are known in advance
// at zero, so that a dashboard shows 0 rather than no data until the first
// such event. Counters not registered yet (as in unit tests) ignore it.
func (m *Metrics) startPlugin(plugin string) {
	for _, reason := range SkipReasons {
		m.SkippedCandidates.WithLabelValues(plugin, reason)
	}
	m.PodUsageEstimated.WithLabelValues(plugin)
	m.Landed.WithLabelValues(LandedAsPlanned)
	m.Landed.WithLabelValues(LandedElsewhere)
}

// Collectors returns every metric, for registering with a registry.
func (m *Metrics) Collectors() []metrics.Registerable {
	return []metrics.Registerable{m.Evictions, m.SurgeMoves, m.SkippedCandidates, m.HotNodes, m.Spread, m.PingPong, m.Landed, m.PodUsageEstimated, m.MemoryGrowth}
}
