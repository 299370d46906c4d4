package collector

import (
	"fmt"
	"sort"
	"time"
)

// Status is the collector's health, for readiness checks and the API.
type Status struct {
	// Ready is true once a round succeeded within the staleness threshold.
	Ready bool
	// Reason explains why the collector is not ready.
	Reason string
	// Rounds counts sampling rounds so far.
	Rounds int
	// LastSuccess is when the provider last answered without error.
	LastSuccess time.Time
	// LastError is the error of the latest round, if it failed.
	LastError error
	// NodesTracked counts nodes with samples.
	NodesTracked int
	// NodesWithoutSamples lists existing nodes the provider gave no usable
	// sample for, sorted.
	NodesWithoutSamples []string
}

// Status reports the collector's health now.
func (c *Collector) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := Status{
		Rounds:              c.rounds,
		LastSuccess:         c.lastSuccess,
		LastError:           c.lastErr,
		NodesTracked:        len(c.series),
		NodesWithoutSamples: append([]string(nil), c.noSamples...),
	}
	sort.Strings(s.NodesWithoutSamples)
	switch {
	case c.lastSuccess.IsZero() && c.lastErr != nil:
		s.Reason = "no successful sample yet: " + c.cfg.Provider.Name() + ": " + c.lastErr.Error()
	case c.lastSuccess.IsZero():
		s.Reason = "no sample collected yet"
	case c.now().Sub(c.lastSuccess) > c.cfg.StaleAfter:
		s.Reason = fmt.Sprintf("provider has not answered since %s (stale after %s)", c.lastSuccess.UTC().Format(time.RFC3339), c.cfg.StaleAfter)
		if c.lastErr != nil {
			s.Reason += ": " + c.cfg.Provider.Name() + ": " + c.lastErr.Error()
		}
	default:
		s.Ready = true
	}
	return s
}
