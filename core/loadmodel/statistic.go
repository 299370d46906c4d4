package loadmodel

import (
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/usage"
)

// Statistic names which number of a load-watcher window stands for a node's
// usage of a resource.
type Statistic string

const (
	// Average is the window's mean.
	Average Statistic = "Average"
	// Latest is the window's newest sample.
	Latest Statistic = "Latest"
	// P95 is the window's 95th percentile.
	P95 Statistic = "P95"
)

// Statistics says, per resource, which statistic stands for its usage. A
// resource it does not name is read on the window's mean.
type Statistics map[usage.Resource]Statistic

// DefaultStatistics are the statistics the scheduler's thresholds and the
// descheduler's hot and cool classification use unless configured: memory
// just taken by any process is taken now, so memory uses the newest sample;
// CPU swings, so it uses the mean.
func DefaultStatistics() Statistics {
	return Statistics{usage.CPU: Average, usage.Memory: Latest}
}

// Complete fills the resources stats does not name with DefaultStatistics
// and returns the result; nil stats gives the defaults.
func (stats Statistics) Complete() Statistics {
	if stats == nil {
		stats = Statistics{}
	}
	for r, s := range DefaultStatistics() {
		if _, set := stats[r]; !set {
			stats[r] = s
		}
	}
	return stats
}

// Pick returns the number of s that stands for the usage of r.
func (stats Statistics) Pick(r usage.Resource, s usage.Stats) float64 {
	return stats[r].Of(s)
}

// Of returns the number of s the statistic names; the mean for an unknown
// one.
func (st Statistic) Of(s usage.Stats) float64 {
	switch st {
	case Latest:
		return s.Latest
	case P95:
		return s.P95
	}
	return s.Avg
}

// Read returns the statistic of r in window w of nu, and false when the
// window has no samples of r.
func (stats Statistics) Read(nu usage.NodeUsage, w usage.Window, r usage.Resource) (float64, bool) {
	s, ok := nu.Get(w, r)
	if !ok {
		return 0, false
	}
	return stats.Pick(r, s), true
}

// ValidateStatistics checks that stats names only measured resources and
// supported statistics; path is where stats sits in the args.
func ValidateStatistics(path *field.Path, stats Statistics) field.ErrorList {
	supported := sets.New(string(Average), string(Latest), string(P95))
	resources := sets.New[string]()
	for _, r := range usage.Resources {
		resources.Insert(string(r))
	}
	var errs field.ErrorList
	for _, r := range slices.Sorted(maps.Keys(stats)) {
		if !resources.Has(string(r)) {
			errs = append(errs, field.NotSupported(path, r, sets.List(resources)))
		} else if !supported.Has(string(stats[r])) {
			errs = append(errs, field.NotSupported(path.Key(string(r)), stats[r], sets.List(supported)))
		}
	}
	return errs
}
