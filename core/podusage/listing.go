package podusage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	utilclock "k8s.io/utils/clock"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// DefaultListingTTL is how long a Listing answers from one list: less than
// metrics-server's 15 s scrape, more than a descheduling cycle takes.
const DefaultListingTTL = 10 * time.Second

// Listing reads every pod's usage with one list of PodMetrics and answers
// from it until it is TTL old: what a caller that asks about many pods at
// once (a descheduling cycle) needs, where a request per pod would meet the
// client's rate limit. A pod missing from the list, or a list that failed,
// is unknown. Each list feeds Trend, when set; Run lists on a period so that
// Trend has samples between a caller's questions.
type Listing struct {
	// Client is a REST client of the server that serves metrics.k8s.io.
	Client rest.Interface
	// TTL defaults to DefaultListingTTL; Clock to the real clock.
	TTL   time.Duration
	Clock utilclock.PassiveClock
	// Trend, when not nil, receives every list.
	Trend *Trend

	mu     sync.Mutex
	listed time.Time
	usage  map[types.NamespacedName]loadmodel.Amount
}

// PodUsage implements Source.
func (l *Listing) PodUsage(ctx context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh(ctx)
	a, ok := l.usage[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]
	return a, ok
}

// Sample lists PodMetrics unless the last list is younger than the TTL.
func (l *Listing) Sample(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh(ctx)
}

// Run samples every period until ctx ends.
func (l *Listing) Run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		l.Sample(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// refresh lists again once the last list is TTL old. Callers hold mu.
func (l *Listing) refresh(ctx context.Context) {
	clk, ttl := l.Clock, l.TTL
	if clk == nil {
		clk = utilclock.RealClock{}
	}
	if ttl <= 0 {
		ttl = DefaultListingTTL
	}
	now := clk.Now()
	if l.usage != nil && now.Sub(l.listed) < ttl && !now.Before(l.listed) {
		return
	}
	usage, err := l.list(ctx)
	l.usage, l.listed = usage, now
	if err == nil && l.Trend != nil {
		l.Trend.Observe(now, usage)
	}
}

// list reads every PodMetrics; an error gives an empty answer, which the
// caller's next question past the TTL retries.
func (l *Listing) list(ctx context.Context) (map[types.NamespacedName]loadmodel.Amount, error) {
	out := map[types.NamespacedName]loadmodel.Amount{}
	if c, ok := l.Client.(*rest.RESTClient); l.Client == nil || ok && c == nil {
		return out, errors.New("no metrics.k8s.io client")
	}
	raw, err := l.Client.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/pods").DoRaw(ctx)
	if err != nil {
		return out, fmt.Errorf("listing PodMetrics: %w", err)
	}
	var list metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(raw, &list); err != nil {
		return out, fmt.Errorf("decoding PodMetrics: %w", err)
	}
	for i := range list.Items {
		pm := &list.Items[i]
		if len(pm.Containers) > 0 {
			out[types.NamespacedName{Namespace: pm.Namespace, Name: pm.Name}] = Sum(pm)
		}
	}
	return out, nil
}
