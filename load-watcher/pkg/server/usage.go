package server

import (
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	apiv1 "github.com/ballast-sched/ballast/load-watcher/pkg/api/v1"
	"github.com/ballast-sched/ballast/load-watcher/pkg/usage"
)

// usage serves GET /api/v1/usage[?node=<node>][&window=<window>]: every
// node with samples, stale ones flagged rather than hidden.
func (s *server) usage(w http.ResponseWriter, r *http.Request) {
	q, e := parseUsageQuery(r.URL.RawQuery, s.windows)
	if e != nil {
		writeAPIError(w, e)
		return
	}
	snap := s.src.Snapshot()
	status := s.src.Status()
	if snap == nil {
		writeError(w, http.StatusServiceUnavailable, "NoData", because("no usage collected yet", status.Reason))
		return
	}
	var names, without []string
	if q.node != "" {
		if _, ok := snap.Nodes[q.node]; !ok {
			if slices.Contains(status.NodesWithoutSamples, q.node) {
				writeError(w, http.StatusNotFound, "NoSamples", "node "+q.node+" exists but has no usable sample yet")
			} else {
				writeError(w, http.StatusNotFound, "UnknownNode", "no usage for node "+q.node)
			}
			return
		}
		names = []string{q.node}
	} else {
		names, _ = s.sortedNames(snap)
		without = status.NodesWithoutSamples
	}
	windows, wnames := s.windows, s.windowNames
	kind := kindUsage
	if q.window != 0 {
		windows, wnames = []usage.Window{q.window}, []string{q.window.String()}
		kind = kindUsage + "/" + wnames[0]
	}

	encode := func(n usage.NodeUsage) ([]byte, error) { return encodeUsage(n, windows, wnames) }
	bodies, err := s.fragments.bodies(names, snap.Nodes, kind, encode)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	now := s.now()
	b := make([]byte, 0, 256)
	b = append(b, `{"apiVersion":`...)
	b = appendString(b, apiv1.APIVersion)
	b = append(b, `,"time":`...)
	b = appendTime(b, now)
	b = append(b, `,"source":`...)
	b = appendString(b, snap.Source)
	b = append(b, `,"periodSeconds":`...)
	b = appendSeconds(b, s.period)
	b = append(b, `,"staleAfterSeconds":`...)
	b = appendSeconds(b, s.staleAfter)
	b = append(b, `,"windows":`...)
	b = appendStrings(b, wnames)
	b = append(b, `,"nodes":{`...)
	sw := startStream(w)
	sw.write(b)
	sw.nodes(names, bodies, snap.Nodes, func(b []byte, n usage.NodeUsage) []byte { return appendNodeHeader(b, n, now) })
	b = append(b[:0], `},"nodesWithoutSamples":`...)
	b = appendStrings(b, without)
	b = append(b, '}')
	sw.write(b)
	sw.end()
}

func windowNames(ws []usage.Window) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

// encodeUsage encodes the cached part of a node, everything but its age
// and stale flag: {"sampleTime":"…","windows":{"1m":{"cpu":{stats},…},…}}.
// windowNames are the windows' String forms, computed once per request.
func encodeUsage(n usage.NodeUsage, windows []usage.Window, windowNames []string) ([]byte, error) {
	sp := scratchPool.Get().(*[]byte)
	defer scratchPool.Put(sp)
	b := (*sp)[:0]
	b = append(b, `{"sampleTime":`...)
	b = appendTime(b, n.SampleTime)
	b = append(b, `,"windows":{`...)
	for i, w := range windows {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, windowNames[i])
		b = append(b, ":{"...)
		first := true
		for _, res := range usage.Resources {
			st, ok := n.Get(w, res)
			if !ok {
				continue
			}
			if !first {
				b = append(b, ',')
			}
			first = false
			b = appendString(b, string(res))
			b = appendStats(b, st)
		}
		b = append(b, '}')
	}
	b = append(b, "}}"...)
	*sp = b
	return append(make([]byte, 0, len(b)), b...), nil // exact size: 5 000 of these stay cached
}

// scratchPool holds buffers for encoding one node.
var scratchPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func appendStats(b []byte, st usage.Stats) []byte {
	b = append(b, `:{"avg":`...)
	b = appendPercent(b, st.Avg)
	b = append(b, `,"std":`...)
	b = appendPercent(b, st.Std)
	b = append(b, `,"max":`...)
	b = appendPercent(b, st.Max)
	b = append(b, `,"p95":`...)
	b = appendPercent(b, st.P95)
	b = append(b, `,"latest":`...)
	b = appendPercent(b, st.Latest)
	b = append(b, `,"samples":`...)
	b = strconv.AppendInt(b, int64(st.Samples), 10)
	return append(b, '}')
}

// appendNodeHeader writes the fields that change with every request
// (sample age, stale) ahead of a node's cached statistics.
func appendNodeHeader(b []byte, n usage.NodeUsage, now time.Time) []byte {
	b = append(b, `{"sampleAgeSeconds":`...)
	b = appendSeconds(b, max(0, now.Sub(n.SampleTime)).Round(time.Millisecond))
	b = append(b, `,"stale":`...)
	b = strconv.AppendBool(b, n.Stale)
	return append(b, ',')
}
