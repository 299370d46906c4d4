package nodeload

import (
	"strings"
	"testing"

	"k8s.io/component-base/metrics/legacyregistry"
	schedmetrics "k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/ballast-sched/ballast/core/metricnames"
)

// TestMetricList keeps docs/metrics/scheduler.txt, which the chart's
// dashboards are checked against, equal to what the scheduler exports:
// Ballast's plugins' metrics, and kube-scheduler's own (those registered
// whatever the feature gates, and the vectors that have a series once a pod
// was scheduled).
func TestMetricList(t *testing.T) {
	rec := &metricnames.Recorder{}
	NewMetrics(rec)
	names, err := rec.Names()
	if err != nil {
		t.Fatal(err)
	}
	schedmetrics.Register()
	schedmetrics.PodScheduled("ballast-scheduler", 0.01)
	upstream, err := metricnames.Gathered(legacyregistry.DefaultGatherer)
	if err != nil {
		t.Fatal(err)
	}
	upstream = append(upstream, metricnames.Visible(schedmetrics.PluginExecutionDuration, schedmetrics.FrameworkExtensionPointDuration,
		schedmetrics.PodSchedulingSLIDuration, schedmetrics.EventHandlingLatency, schedmetrics.SchedulerQueueIncomingPods,
		schedmetrics.Goroutines, schedmetrics.PermitWaitDuration, schedmetrics.CacheSize, schedmetrics.PluginEvaluationTotal)...)
	for _, n := range upstream {
		if strings.HasPrefix(n, "scheduler_") {
			names = append(names, n)
		}
	}
	metricnames.Check(t, "scheduler", names)
}
