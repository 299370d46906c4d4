package podusage

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// Trend defaults.
const (
	// DefaultTrendSpan is how far back a Trend fits a pod's memory.
	DefaultTrendSpan = 15 * time.Minute
	// DefaultTrendMinSpan is how long a pod must have been sampled before a
	// Trend calls it growing: a pod that starts fills its caches first.
	DefaultTrendMinSpan = 10 * time.Minute
	// minTrendSamples is the fewest samples a fit is made from.
	minTrendSamples = 5
	// minTrendFit is the least share of the samples' variance the line must
	// explain (R²): memory that rises and falls around a level has a slope
	// too, but no line fits it; a leak with noise around it still fits.
	minTrendFit = 0.6
)

// Growth is how a pod's memory rose over the samples a Trend holds: the
// slope of the least-squares line through them.
type Growth struct {
	// BytesPerMinute is the line's slope.
	BytesPerMinute float64
	// Over is the time from the first sample to the last.
	Over time.Duration
	// First and Last are the memory of the first and the last sample, in bytes.
	First, Last float64
}

// MiBPerMinute is the slope in MiB per minute, the unit Ballast reports.
func (g Growth) MiBPerMinute() float64 { return g.BytesPerMinute / (1 << 20) }

// Trend keeps each pod's recent memory samples and tells a pod whose
// memory keeps rising: a leak, or a cache without a bound. Such a pod heats
// whatever node it runs on, so moving it fixes nothing. Metrics-server keeps
// no history and load-watcher keeps nodes' only, so the caller feeds it,
// every sampling period (Observe). Safe for concurrent use.
type Trend struct {
	// Span is how far back samples are kept and fitted; MinSpan how long
	// they must cover. Default DefaultTrendSpan and DefaultTrendMinSpan.
	Span, MinSpan time.Duration

	mu   sync.Mutex
	pods map[types.NamespacedName][]memorySample
}

type memorySample struct {
	at    time.Time
	bytes float64
}

func (t *Trend) spans() (span, minSpan time.Duration) {
	span, minSpan = t.Span, t.MinSpan
	if span <= 0 {
		span = DefaultTrendSpan
	}
	if minSpan <= 0 {
		minSpan = DefaultTrendMinSpan
	}
	return span, min(minSpan, span)
}

// Observe records what every listed pod used at at. A pod missing from
// usage is forgotten: it ended, or metrics-server lost it, and a gap would
// join two lives of a pod of that name into one line.
func (t *Trend) Observe(at time.Time, usage map[types.NamespacedName]loadmodel.Amount) {
	t.mu.Lock()
	defer t.mu.Unlock()
	span, _ := t.spans()
	if t.pods == nil {
		t.pods = map[types.NamespacedName][]memorySample{}
	}
	for pod := range t.pods {
		if _, ok := usage[pod]; !ok {
			delete(t.pods, pod)
		}
	}
	for pod, a := range usage {
		samples := t.pods[pod]
		if n := len(samples); n > 0 && !at.After(samples[n-1].at) {
			continue
		}
		samples = append(samples, memorySample{at: at, bytes: float64(a.Memory)})
		first := 0
		for first < len(samples) && at.Sub(samples[first].at) > span {
			first++
		}
		t.pods[pod] = slices.Clip(samples[first:])
	}
}

// Growth returns how pod's memory rose, and whether it keeps rising: its
// samples cover MinSpan, a line fits them (R² ≥ 0.6) and slopes up, and the
// newest sample is the line's, not a fall back to where it started.
func (t *Trend) Growth(pod types.NamespacedName) (Growth, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, minSpan := t.spans()
	return fit(t.pods[pod], minSpan)
}

// Growing returns every pod whose memory keeps rising, by name.
func (t *Trend) Growing() map[types.NamespacedName]Growth {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, minSpan := t.spans()
	out := map[types.NamespacedName]Growth{}
	for _, pod := range slices.SortedFunc(maps.Keys(t.pods), compareNames) {
		if g, ok := fit(t.pods[pod], minSpan); ok {
			out[pod] = g
		}
	}
	return out
}

func compareNames(a, b types.NamespacedName) int {
	return cmp.Or(strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
}

// fit is the least-squares line through samples, and whether it describes
// a steady rise.
func fit(samples []memorySample, minSpan time.Duration) (Growth, bool) {
	n := len(samples)
	if n < minTrendSamples {
		return Growth{}, false
	}
	over := samples[n-1].at.Sub(samples[0].at)
	if over < minSpan {
		return Growth{}, false
	}
	var mx, my float64
	for _, s := range samples {
		mx += s.at.Sub(samples[0].at).Minutes()
		my += s.bytes
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxx, sxy, syy float64
	for _, s := range samples {
		dx, dy := s.at.Sub(samples[0].at).Minutes()-mx, s.bytes-my
		sxx += dx * dx
		sxy += dx * dy
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return Growth{}, false
	}
	slope := sxy / sxx
	g := Growth{BytesPerMinute: slope, Over: over, First: samples[0].bytes, Last: samples[n-1].bytes}
	r2 := sxy * sxy / (sxx * syy)
	return g, slope > 0 && r2 >= minTrendFit && g.Last > g.First
}
