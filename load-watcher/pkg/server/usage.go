package server

import (
	"net/http"
	"slices"
	"strconv"
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
		writeError(w, http.StatusServiceUnavailable, "NoData", "no usage collected yet: "+status.Reason)
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
		names = make([]string, 0, len(snap.Nodes))
		for name := range snap.Nodes {
			names = append(names, name)
		}
		slices.Sort(names)
		without = status.NodesWithoutSamples
	}
	windows := s.windows
	kind := "usage"
	if q.window != 0 {
		windows = []usage.Window{q.window}
		kind = "usage/" + q.window.String()
	}

	now := s.now()
	b := make([]byte, 0, 256+len(names)*(700*len(windows)/3+200))
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
	b = appendStrings(b, windowNames(windows))
	b = append(b, `,"nodes":{`...)
	b, err := s.fragments.appendNodes(b, names, snap.Nodes, kind, func(n usage.NodeUsage) ([]byte, error) {
		return encodeUsage(n, windows)
	}, func(b []byte, n usage.NodeUsage) []byte { return appendNodeHeader(b, n, now) })
	if err != nil {
		writeError(w, http.StatusInternalServerError, "InternalError", err.Error())
		return
	}
	b = append(b, `},"nodesWithoutSamples":`...)
	b = appendStrings(b, without)
	b = append(b, '}')
	writeBody(w, http.StatusOK, b)
}

func windowNames(ws []usage.Window) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return out
}

// usageFragment is the cached part of a node: everything but its age.
type usageFragment struct {
	Windows map[string]map[usage.Resource]usage.Stats `json:"windows"`
}

func encodeUsage(n usage.NodeUsage, windows []usage.Window) ([]byte, error) {
	f := usageFragment{Windows: make(map[string]map[usage.Resource]usage.Stats, len(windows))}
	for _, w := range windows {
		byRes := map[usage.Resource]usage.Stats{}
		for _, res := range usage.Resources {
			if st, ok := n.Get(w, res); ok {
				byRes[res] = st
			}
		}
		f.Windows[w.String()] = byRes
	}
	return marshal(f)
}

// appendNodeHeader writes the fields that change with every request
// (sample age, stale) ahead of a node's cached statistics.
func appendNodeHeader(b []byte, n usage.NodeUsage, now time.Time) []byte {
	b = append(b, `{"sampleTime":`...)
	b = appendTime(b, n.SampleTime)
	b = append(b, `,"sampleAgeSeconds":`...)
	b = appendSeconds(b, max(0, now.Sub(n.SampleTime)).Round(time.Millisecond))
	b = append(b, `,"stale":`...)
	b = strconv.AppendBool(b, n.Stale)
	return append(b, ',')
}
