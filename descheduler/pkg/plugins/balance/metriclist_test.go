package balance

import (
	"testing"

	"k8s.io/component-base/metrics"
	deschedmetrics "sigs.k8s.io/descheduler/metrics"

	"github.com/ballast-sched/ballast/core/metricnames"
)

// TestMetricList keeps docs/metrics/descheduler.txt, which the chart's
// dashboards are checked against, equal to what the descheduler exports:
// Ballast's plugins' metrics and the descheduler's own that are not hidden.
func TestMetricList(t *testing.T) {
	var named []metricnames.Named
	for _, m := range NewMetrics().Collectors() {
		named = append(named, m.(metricnames.Named))
	}
	deschedmetrics.Register()
	for _, m := range []metrics.Registerable{deschedmetrics.PodsEvicted, deschedmetrics.PodsEvictedTotal, deschedmetrics.DeschedulerLoopDuration,
		deschedmetrics.DeschedulerStrategyDuration, deschedmetrics.LoopDuration, deschedmetrics.StrategyDuration} {
		named = append(named, m.(metricnames.Named))
	}
	metricnames.Check(t, "descheduler", metricnames.Visible(named...))
}
