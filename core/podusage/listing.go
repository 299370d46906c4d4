package podusage

import (
	"context"
	"encoding/json"
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
// is unknown.
type Listing struct {
	// Client is a REST client of the server that serves metrics.k8s.io.
	Client rest.Interface
	// TTL defaults to DefaultListingTTL; Clock to the real clock.
	TTL   time.Duration
	Clock utilclock.PassiveClock

	mu     sync.Mutex
	listed time.Time
	usage  map[types.NamespacedName]loadmodel.Amount
}

// PodUsage implements Source.
func (l *Listing) PodUsage(ctx context.Context, pod *v1.Pod) (loadmodel.Amount, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	clk, ttl := l.Clock, l.TTL
	if clk == nil {
		clk = utilclock.RealClock{}
	}
	if ttl <= 0 {
		ttl = DefaultListingTTL
	}
	if now := clk.Now(); l.usage == nil || now.Sub(l.listed) >= ttl || now.Before(l.listed) {
		l.usage, l.listed = l.list(ctx), now
	}
	a, ok := l.usage[types.NamespacedName{Namespace: pod.Namespace, Name: pod.Name}]
	return a, ok
}

// list reads every PodMetrics; an error gives an empty answer, which the
// caller's next question past the TTL retries.
func (l *Listing) list(ctx context.Context) map[types.NamespacedName]loadmodel.Amount {
	out := map[types.NamespacedName]loadmodel.Amount{}
	if c, ok := l.Client.(*rest.RESTClient); l.Client == nil || ok && c == nil {
		return out
	}
	raw, err := l.Client.Get().AbsPath("/apis/metrics.k8s.io/v1beta1/pods").DoRaw(ctx)
	if err != nil {
		return out
	}
	var list metricsv1beta1.PodMetricsList
	if err := json.Unmarshal(raw, &list); err != nil {
		return out
	}
	for i := range list.Items {
		pm := &list.Items[i]
		if len(pm.Containers) > 0 {
			out[types.NamespacedName{Namespace: pm.Namespace, Name: pm.Name}] = Sum(pm)
		}
	}
	return out
}
