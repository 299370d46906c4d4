package collector

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ballast-sched/ballast/core/metricnames"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider/static"
)

// TestMetricList keeps docs/metrics/load-watcher.txt, which the chart's
// dashboards are checked against, equal to what the collector registers.
func TestMetricList(t *testing.T) {
	rec := &metricnames.Recorder{}
	if _, err := New(Config{Provider: static.New(), Nodes: StaticNodes{}, Registerer: rec}); err != nil {
		t.Fatal(err)
	}
	names, err := rec.Names()
	if err != nil {
		t.Fatal(err)
	}
	metricnames.Check(t, "load-watcher", names)
}

// TestNodeMetrics checks the per-node series: the age of the newest sample
// and the usage in percent by resource, window and statistic.
func TestNodeMetrics(t *testing.T) {
	c, p, clock := newTestCollector(t, StaticNodes{{Name: "a"}}, usage.Window1m)
	p.Set("a", 40, 55)
	collect(t, c)
	clock.Step(7 * time.Second)
	// One sample: avg, p95 and latest are that sample.
	want := `
# HELP load_watcher_node_sample_age_seconds Age of the newest usage sample of each node.
# TYPE load_watcher_node_sample_age_seconds gauge
load_watcher_node_sample_age_seconds{node="a",provider="static"} 7
# HELP load_watcher_node_usage_percent Usage of each node in percent of its allocatable, by resource (cpu, memory), window (as configured) and statistic (avg, p95, latest), as load-watcher serves it to the scheduler and descheduler.
# TYPE load_watcher_node_usage_percent gauge
load_watcher_node_usage_percent{node="a",provider="static",resource="cpu",statistic="avg",window="1m"} 40
load_watcher_node_usage_percent{node="a",provider="static",resource="cpu",statistic="latest",window="1m"} 40
load_watcher_node_usage_percent{node="a",provider="static",resource="cpu",statistic="p95",window="1m"} 40
load_watcher_node_usage_percent{node="a",provider="static",resource="memory",statistic="avg",window="1m"} 55
load_watcher_node_usage_percent{node="a",provider="static",resource="memory",statistic="latest",window="1m"} 55
load_watcher_node_usage_percent{node="a",provider="static",resource="memory",statistic="p95",window="1m"} 55
`
	if err := testutil.CollectAndCompare(c.metrics.nodes, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
