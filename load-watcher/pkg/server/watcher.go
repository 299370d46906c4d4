package server

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/ballast-sched/ballast/load-watcher/pkg/api/watcher"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
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
	snap := s.src.Snapshot()
	if snap == nil || len(snap.Nodes) == 0 {
		writeError(w, http.StatusServiceUnavailable, "NoData", "no usage collected yet: "+s.src.Status().Reason)
		return
	}
	var names []string
	if q.host != "" {
		n, ok := snap.Nodes[q.host]
		switch {
		case !ok:
			writeError(w, http.StatusNotFound, "UnknownHost", "no usage for host "+q.host)
			return
		case n.Stale:
			writeError(w, http.StatusNotFound, "StaleUsage", "usage of host "+q.host+" is stale")
			return
		}
		names = []string{q.host}
	} else {
		names = make([]string, 0, len(snap.Nodes))
		for name, n := range snap.Nodes {
			if !n.Stale {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			writeError(w, http.StatusServiceUnavailable, "StaleUsage", "usage of every node is stale: "+s.src.Status().Reason)
			return
		}
		slices.Sort(names)
	}

	now := s.now()
	b := make([]byte, 0, 128+len(names)*512)
	b = append(b, `{"timestamp":`...)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, `,"window":{"duration":`...)
	b = appendString(b, s.compat.String())
	b = append(b, `,"start":`...)
	b = strconv.AppendInt(b, now.Add(-s.compat.Duration()).Unix(), 10)
	b = append(b, `,"end":`...)
	b = strconv.AppendInt(b, now.Unix(), 10)
	b = append(b, `},"source":`...)
	b = appendString(b, snap.Source)
	b = append(b, `,"data":{"NodeMetricsMap":{`...)
	b, err := s.fragments.appendNodes(b, names, snap.Nodes, "watcher", s.encodeCompat, nil)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	b = append(b, "}}}"...)
	writeBody(w, http.StatusOK, b)
}

var compatTypes = map[usage.Resource]string{usage.CPU: watcher.TypeCPU, usage.Memory: watcher.TypeMemory}

// encodeCompat encodes one node's watcher.NodeMetrics.
func (s *server) encodeCompat(n usage.NodeUsage) ([]byte, error) {
	nm := watcher.NodeMetrics{Metrics: []watcher.Metric{}}
	rollup := s.compat.String()
	for _, res := range usage.Resources {
		st, ok := n.Get(s.compat, res)
		if !ok {
			continue
		}
		t := compatTypes[res]
		nm.Metrics = append(nm.Metrics,
			watcher.Metric{Name: string(res), Type: t, Operator: watcher.OperatorAvg, Rollup: rollup, Value: st.Avg},
			watcher.Metric{Name: string(res), Type: t, Operator: watcher.OperatorStd, Rollup: rollup, Value: st.Std},
			watcher.Metric{Name: string(res), Type: t, Operator: watcher.OperatorLatest, Rollup: rollup, Value: st.Latest},
		)
	}
	return marshal(nm)
}
