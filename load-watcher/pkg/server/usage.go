package server

import (
	"net/http"
	"slices"
	"strconv"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
)

// usage serves GET /api/v1/usage[?node=<node>][&window=<window>]: every
// node with samples, stale ones flagged rather than hidden, cut from the
// round's encoded answers; 304 Not Modified to a request whose
// If-None-Match names the round (etag.go).
func (s *server) usage(w http.ResponseWriter, r *http.Request) {
	q, e := parseUsageQuery(r.URL.RawQuery, s.windows)
	if e != nil {
		writeAPIError(w, e)
		return
	}
	a := s.current()
	if a == nil {
		writeError(w, http.StatusServiceUnavailable, "NoData", because("no usage collected yet", s.src.Status().Reason))
		return
	}
	nodes := a.nodes
	from, to := 0, nodes.Len()
	without := nodes.NodesWithoutSamples()
	if q.node != "" {
		i, ok := nodes.Find(q.node)
		if !ok {
			if slices.Contains(without, q.node) {
				writeError(w, http.StatusNotFound, "NoSamples", "node "+q.node+" exists but has no usable sample yet")
			} else {
				writeError(w, http.StatusNotFound, "UnknownNode", "no usage for node "+q.node)
			}
			return
		}
		from, to, without = i, i+1, nil
	}
	wi, wnames := -1, s.windowNames
	if q.window != 0 {
		wi = slices.Index(s.windows, q.window)
		wnames = wnames[wi : wi+1]
	}
	// A round of another source than a Collector (collector.RoundOf) has
	// no number: it gets no tag, and every request is answered in full.
	if seq := nodes.Seq(); seq != 0 {
		tag := entityTag(s.epoch, seq)
		w.Header().Set("ETag", tag)
		if inm := r.Header.Get("If-None-Match"); inm != "" && noneMatch(inm, tag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	now := s.now()
	b := make([]byte, 0, 256)
	b = append(b, `{"apiVersion":`...)
	b = appendString(b, apiv1.APIVersion)
	b = append(b, `,"time":`...)
	b = appendTime(b, now)
	b = append(b, `,"source":`...)
	b = appendString(b, nodes.Source())
	b = append(b, `,"periodSeconds":`...)
	b = appendSeconds(b, s.period)
	b = append(b, `,"staleAfterSeconds":`...)
	b = appendSeconds(b, s.staleAfter)
	b = append(b, `,"windows":`...)
	b = appendStrings(b, wnames)
	b = append(b, `,"nodes":{`...)
	sw := startStream(w)
	sw.write(b)
	for i := from; i < to; i++ {
		a.writeNode(sw, i, wi, i == from, now)
	}
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
