package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ballast-sched/ballast/core/usage"
)

// metrics are the collector's own Prometheus metrics, registered on the
// registerer it was given (never the global one), so two collectors in one
// process do not clash.
type metrics struct {
	providerErrors prometheus.Counter
	sampleDuration prometheus.Histogram
	rounds         *prometheus.CounterVec
	rejected       *prometheus.CounterVec
	lastSuccess    prometheus.Gauge
	nodesTracked   prometheus.GaugeFunc
	nodesNoSamples prometheus.GaugeFunc
	nodes          *nodeCollector
}

func newMetrics(reg prometheus.Registerer, providerName string, c *Collector) (*metrics, error) {
	constLabels := prometheus.Labels{"provider": providerName}
	m := &metrics{
		providerErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "load_watcher_provider_errors_total", ConstLabels: constLabels,
			Help: "Sampling rounds in which the usage provider returned an error.",
		}),
		sampleDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "load_watcher_provider_sample_duration_seconds", ConstLabels: constLabels,
			Help:    "Time taken by one sampling round of the usage provider.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "load_watcher_sampling_rounds_total", ConstLabels: constLabels,
			Help: "Sampling rounds by result: new_samples (some node got a newer sample), nothing_new (the source had not published since the last round; a retry follows shortly), error.",
		}, []string{"result"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "load_watcher_samples_rejected_total", ConstLabels: constLabels,
			Help: "Sample values dropped (nan, negative) or clamped (over_capacity), by resource and reason.",
		}, []string{"resource", "reason"}),
		lastSuccess: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "load_watcher_last_success_timestamp_seconds", ConstLabels: constLabels,
			Help: "Unix time of the last sampling round without a provider error.",
		}),
		nodesTracked: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "load_watcher_nodes_tracked", ConstLabels: constLabels,
			Help: "Nodes with samples in the buffers.",
		}, func() float64 { return float64(c.Status().NodesTracked) }),
		nodesNoSamples: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "load_watcher_nodes_without_samples", ConstLabels: constLabels,
			Help: "Cluster nodes for which the provider has returned no usable sample.",
		}, func() float64 { return float64(len(c.Status().NodesWithoutSamples)) }),
		nodes: newNodeCollector(c, constLabels),
	}
	// Every result has its series from the start, at zero, so a dashboard
	// shows 0 errors rather than no data.
	for _, result := range []string{roundNewSamples, roundNothingNew, roundError} {
		m.rounds.WithLabelValues(result)
	}
	for _, col := range []prometheus.Collector{m.providerErrors, m.sampleDuration, m.rounds, m.rejected, m.lastSuccess, m.nodesTracked, m.nodesNoSamples, m.nodes} {
		if err := reg.Register(col); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// nodeStatistics are the statistics the per-node usage gauge exports: what
// LoadAware and LoadAwareBalance compare with their thresholds by default
// (avg for cpu, latest for memory) and the p95 either may be set to.
var nodeStatistics = []struct {
	name string
	of   func(usage.Stats) float64
}{
	{"avg", func(s usage.Stats) float64 { return s.Avg }},
	{"p95", func(s usage.Stats) float64 { return s.P95 }},
	{"latest", func(s usage.Stats) float64 { return s.Latest }},
}

// nodeCollector reports, at scrape time, the age of each node's newest
// sample and its usage as the scheduler reads it.
type nodeCollector struct {
	c     *Collector
	desc  *prometheus.Desc
	usage *prometheus.Desc
}

func newNodeCollector(c *Collector, constLabels prometheus.Labels) *nodeCollector {
	return &nodeCollector{c: c,
		desc: prometheus.NewDesc("load_watcher_node_sample_age_seconds",
			"Age of the newest usage sample of each node.", []string{"node"}, constLabels),
		usage: prometheus.NewDesc("load_watcher_node_usage_percent",
			"Usage of each node in percent of its allocatable, by resource (cpu, memory), window (as configured) and statistic "+
				"(avg, p95, latest), as load-watcher serves it to the scheduler and descheduler.",
			[]string{"node", "resource", "window", "statistic"}, constLabels),
	}
}

func (s *nodeCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- s.desc
	ch <- s.usage
}

func (s *nodeCollector) Collect(ch chan<- prometheus.Metric) {
	r := s.c.Round()
	if r == nil {
		return
	}
	now := s.c.now()
	for i := range r.Len() {
		ch <- prometheus.MustNewConstMetric(s.desc, prometheus.GaugeValue, now.Sub(r.SampleTime(i)).Seconds(), r.Name(i))
		for _, w := range r.windows {
			for _, res := range usage.Resources {
				st, ok := r.Stats(i, w, res)
				if !ok {
					continue
				}
				for _, stat := range nodeStatistics {
					ch <- prometheus.MustNewConstMetric(s.usage, prometheus.GaugeValue, stat.of(st), r.Name(i), string(res), w.String(), stat.name)
				}
			}
		}
	}
}

func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
