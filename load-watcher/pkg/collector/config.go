package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// DefaultPeriod is how often the provider is sampled unless told otherwise.
const DefaultPeriod = 15 * time.Second

// Config configures a Collector.
type Config struct {
	// Provider is the usage source. Required.
	Provider provider.Provider
	// Nodes lists the cluster's nodes. Required.
	Nodes NodeSource
	// Period is the time between sampling rounds; defaults to DefaultPeriod.
	Period time.Duration
	// Windows are the statistics windows; defaults to usage.DefaultWindows.
	Windows []usage.Window
	// StaleAfter marks a node stale when its newest sample is older;
	// defaults to three periods.
	StaleAfter time.Duration
	// Registerer receives the collector's metrics; a private registry when
	// nil (see Gatherer).
	Registerer prometheus.Registerer
	// Now is the clock; time.Now when nil. Tests set it.
	Now func() time.Time
}

// SetDefaults fills unset fields.
func (c *Config) SetDefaults() {
	if c.Period == 0 {
		c.Period = DefaultPeriod
	}
	if len(c.Windows) == 0 {
		c.Windows = append([]usage.Window(nil), usage.DefaultWindows...)
	}
	if c.StaleAfter == 0 {
		c.StaleAfter = 3 * c.Period
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Validate reports every invalid field at once.
func (c *Config) Validate(path *field.Path) error {
	var errs field.ErrorList
	if c.Provider == nil {
		errs = append(errs, field.Required(path.Child("provider"), ""))
	}
	if c.Nodes == nil {
		errs = append(errs, field.Required(path.Child("nodes"), ""))
	}
	if c.Period <= 0 {
		errs = append(errs, field.Invalid(path.Child("period"), c.Period.String(), "must be positive"))
	}
	if c.StaleAfter <= 0 {
		errs = append(errs, field.Invalid(path.Child("staleAfter"), c.StaleAfter.String(), "must be positive"))
	}
	seen := map[usage.Window]bool{}
	for i, w := range c.Windows {
		p := path.Child("windows").Index(i)
		switch {
		case seen[w]:
			errs = append(errs, field.Duplicate(p, w.String()))
		case c.Period > 0 && w.Duration() < c.Period:
			errs = append(errs, field.Invalid(p, w.String(), "must be at least one period ("+c.Period.String()+")"))
		}
		seen[w] = true
	}
	return errs.ToAggregate()
}

// maxWindow is the longest configured window.
func (c *Config) maxWindow() time.Duration {
	var m time.Duration
	for _, w := range c.Windows {
		m = max(m, w.Duration())
	}
	return m
}
