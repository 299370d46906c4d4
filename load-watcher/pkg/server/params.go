package server

import (
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	apiv1 "github.com/ballast-sched/ballast/core/api/v1"
	"github.com/ballast-sched/ballast/core/usage"
)

// maxQueryLength bounds the raw query string we parse at all.
const maxQueryLength = 1024

// parseQuery parses raw and rejects parameters other than allowed and
// repeated ones.
func parseQuery(raw string, allowed ...string) (url.Values, *apiError) {
	if len(raw) > maxQueryLength {
		return nil, badRequest("query string longer than %d bytes", maxQueryLength)
	}
	q, err := url.ParseQuery(raw)
	if err != nil {
		return nil, badRequest("malformed query string: %v", err)
	}
	for k, vs := range q {
		if !slices.Contains(allowed, k) {
			return nil, badRequest("unknown query parameter %q; allowed: %s", k, strings.Join(allowed, ", "))
		}
		if len(vs) > 1 {
			return nil, badRequest("query parameter %q given %d times; give it once", k, len(vs))
		}
	}
	return q, nil
}

// parseNodeName validates a node name from the query.
func parseNodeName(param, name string) *apiError {
	if errs := validation.IsDNS1123Subdomain(name); len(errs) > 0 {
		return badRequest("invalid %s %q: %s", param, name, strings.Join(errs, "; "))
	}
	return nil
}

// watcherQuery is the parsed query of /watcher.
type watcherQuery struct {
	host string
}

func parseWatcherQuery(raw string) (watcherQuery, *apiError) {
	q, e := parseQuery(raw, "host")
	if e != nil {
		return watcherQuery{}, e
	}
	out := watcherQuery{}
	if hs, ok := q["host"]; ok {
		out.host = hs[0]
		if e := parseNodeName("host", out.host); e != nil {
			return watcherQuery{}, e
		}
	}
	return out, nil
}

// usageQuery is the parsed query of /api/v1/usage.
type usageQuery struct {
	node   string
	window usage.Window // zero: every window
}

func parseUsageQuery(raw string, windows []usage.Window) (usageQuery, *apiError) {
	q, e := parseQuery(raw, "node", "window")
	if e != nil {
		return usageQuery{}, e
	}
	out := usageQuery{}
	if ns, ok := q["node"]; ok {
		out.node = ns[0]
		if e := parseNodeName("node", out.node); e != nil {
			return usageQuery{}, e
		}
	}
	if ws, ok := q["window"]; ok {
		w, err := apiv1.ParseWindow(ws[0])
		if err != nil {
			return usageQuery{}, badRequest("%v", err)
		}
		if !slices.Contains(windows, w) {
			names := make([]string, len(windows))
			for i, w := range windows {
				names[i] = w.String()
			}
			return usageQuery{}, badRequest("window %q is not kept; kept windows: %s", ws[0], strings.Join(names, ", "))
		}
		out.window = w
	}
	return out, nil
}
