package nodeload

import (
	"errors"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// Metrics are the Prometheus counters of the Ballast plugins. They are
// exported on the scheduler's /metrics next to kube-scheduler's own (the
// framework already measures per-plugin latency).
type Metrics struct {
	// Unavailable counts node evaluations that fell back to requests because
	// usage was missing, stale or invalid; labels plugin and cause.
	Unavailable *prometheus.CounterVec
	// Filtered counts nodes rejected because a usage threshold was exceeded;
	// labels plugin and resource.
	Filtered *prometheus.CounterVec
	// Overcommitted counts pods admitted beyond requests by UsageAwareFit;
	// label resource.
	Overcommitted *prometheus.CounterVec
	// Estimates counts pod estimates; labels plugin and source
	// (EstimateSiblings or EstimateRequests).
	Estimates *prometheus.CounterVec
	// Thresholds are the usage thresholds a plugin filters nodes by, in
	// percent of allocatable; labels plugin, resource, window and statistic
	// (what of load-watcher's load_watcher_node_usage_percent it compares).
	Thresholds *prometheus.GaugeVec
	// PlannedMoves is the number of the descheduler's moves whose
	// destination a plugin favours for the workload's next pod, as of its
	// last read of the moves; label plugin.
	PlannedMoves *prometheus.GaugeVec
}

// The sources of a pod's estimate, as the Estimates metric labels them.
const (
	// EstimateSiblings: the measured usage of the pod's running siblings.
	EstimateSiblings = "siblings"
	// EstimateRequests: the pod's requests (and limits and defaults), for a
	// pod without running siblings or without pod metrics.
	EstimateRequests = "requests"
)

// StatisticLabel is how load-watcher's load_watcher_node_usage_percent
// labels s: avg, p95, latest.
func StatisticLabel(s loadmodel.Statistic) string {
	if s == loadmodel.Average {
		return "avg"
	}
	return strings.ToLower(string(s))
}

// NewMetrics creates the counters and registers them with reg (the
// scheduler's legacy registry in production). Counters already registered by
// an earlier Tracker in the same process are reused.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Unavailable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ballast", Subsystem: "scheduler", Name: "usage_unavailable_total",
			Help: "Node evaluations where real usage was missing, stale or invalid, so placement fell back to requests.",
		}, []string{"plugin", "cause"}),
		Filtered: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ballast", Subsystem: "scheduler", Name: "filtered_by_threshold_total",
			Help: "Nodes rejected for a pod because predicted usage exceeded a threshold.",
		}, []string{"plugin", "resource"}),
		Overcommitted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ballast", Subsystem: "scheduler", Name: "overcommit_admitted_total",
			Help: "Node evaluations where UsageAwareFit admitted a pod beyond the node's requests.",
		}, []string{"resource"}),
		Estimates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "ballast", Subsystem: "scheduler", Name: "pod_estimates_total",
			Help: "Pods estimated before they run, by source: their running siblings' measured usage, or their requests.",
		}, []string{"plugin", "source"}),
		Thresholds: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "ballast", Subsystem: "scheduler", Name: "threshold_percent",
			Help: "Usage threshold above which a plugin filters a node out, in percent of allocatable, by plugin, resource, window and statistic.",
		}, []string{"plugin", "resource", "window", "statistic"}),
		PlannedMoves: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: "ballast", Subsystem: "scheduler", Name: "planned_moves",
			Help: "The descheduler's recent moves whose replacement has not been seen running, as of the plugin's last read of its moves ConfigMap: their destination is favoured for the workload's next pod.",
		}, []string{"plugin"}),
	}
	// Series a dashboard sums are there from the start, at zero, so a panel
	// shows 0 rather than no data until the first such event.
	for _, r := range usage.Resources {
		m.Overcommitted.WithLabelValues(string(r))
	}
	if reg != nil {
		m.Unavailable = register(reg, m.Unavailable)
		m.Filtered = register(reg, m.Filtered)
		m.Overcommitted = register(reg, m.Overcommitted)
		m.Estimates = register(reg, m.Estimates)
		m.Thresholds = register(reg, m.Thresholds)
		m.PlannedMoves = register(reg, m.PlannedMoves)
	}
	return m
}

// startPlugin creates plugin's counters at zero, one per cause and estimate
// source, so that a dashboard summing them shows 0 rather than no data.
func (m *Metrics) startPlugin(plugin string) {
	for _, cause := range []Cause{CauseMissing, CauseStale, CauseInvalid} {
		m.Unavailable.WithLabelValues(plugin, string(cause))
	}
	for _, source := range []string{EstimateSiblings, EstimateRequests} {
		m.Estimates.WithLabelValues(plugin, source)
	}
}

func register[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
		// A clash with a different metric of the same name: keep counting
		// locally rather than failing the scheduler over an observability gap.
	}
	return c
}
