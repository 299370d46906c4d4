package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/load-watcher/pkg/api/watcher"
	"github.com/ballast-sched/ballast/load-watcher/pkg/collector"
)

// watcher serves GET /watcher[?host=<node>] in paypal/load-watcher's
// format: AVG, STD and Latest of CPU and memory over the compat window.
// That format has no staleness field, so stale nodes are left out.
func (s *server) watcher(w http.ResponseWriter, r *http.Request) {
	q, e := parseWatcherQuery(r.URL.RawQuery)
	if e != nil {
		writeAPIError(w, e)
		return
	}
	round := s.src.Round()
	if round == nil || round.Len() == 0 {
		writeError(w, http.StatusServiceUnavailable, "NoData", because("no usage collected yet", s.src.Status().Reason))
		return
	}
	now := s.now()
	from, to := 0, round.Len()
	if q.host != "" {
		i, ok := round.Find(q.host)
		switch {
		case !ok:
			writeError(w, http.StatusNotFound, "UnknownHost", "no usage for host "+q.host)
			return
		case round.Stale(i, now):
			writeError(w, http.StatusNotFound, "StaleUsage", "usage of host "+q.host+" is stale")
			return
		}
		from, to = i, i+1
	} else if !anyFresh(round, now) {
		writeError(w, http.StatusServiceUnavailable, "StaleUsage", because("usage of every node is stale", s.src.Status().Reason))
		return
	}

	b := make([]byte, 0, 192)
	b = append(b, `{"timestamp":`...)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, `,"window":{"duration":`...)
	b = appendString(b, s.compatName)
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, now.Add(-s.compat.Duration()).Unix(), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, `},"source":`...)
	b = appendString(b, round.Source())
	b = append(b, `,"data":{"NodeMetricsMap":{`...)
	sw := startStream(w)
	sw.write(b)
	first := true
	for i := from; i < to; i++ {
		if round.Stale(i, now) {
			continue
		}
		b = b[:0]
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendString(b, round.Name(i))
		b = append(b, ':')
		b = s.appendCompat(b, round, i)
		sw.write(b)
	}
	sw.write([]byte("}}}"))
	sw.end()
}

// anyFresh reports whether some node of round is not stale at now.
func anyFresh(round *collector.Round, now time.Time) bool {
	for i := range round.Len() {
		if !round.Stale(i, now) {
			return true
		}
	}
	return false
}

var compatTypes = map[usage.Resource]string{usage.CPU: watcher.TypeCPU, usage.Memory: watcher.TypeMemory}

// appendCompat encodes one node's watcher.NodeMetrics by hand (the field
// order of pkg/api/watcher): AVG, STD and Latest per resource with samples.
func (s *server) appendCompat(b []byte, round *collector.Round, i int) []byte {
	b = append(b, `{"metrics":[`...)
	first := true
	for _, res := range usage.Resources {
		st, ok := round.Stats(i, s.compat, res)
		if !ok {
			continue
		}
		for _, m := range [...]struct {
			op string
			v  float64
		}{{watcher.OperatorAvg, st.Avg}, {watcher.OperatorStd, st.Std}, {watcher.OperatorLatest, st.Latest}} {
			if !first {
				b = append(b, ',')
			}
			first = false
			b = append(b, `{"name":`...)
			b = appendString(b, string(res))
			b = append(b, `,"type":`...)
			b = appendString(b, compatTypes[res])
			b = append(b, `,"operator":`...)
			b = appendString(b, m.op)
			b = append(b, `,"rollup":`...)
			b = appendString(b, s.compatName)
			b = append(b, `,"value":`...)
			b = appendPercent(b, m.v)
			b = append(b, '}')
		}
	}
	return append(b, `],"tags":{},"metadata":{"dataCenter":""}}`...)
}
