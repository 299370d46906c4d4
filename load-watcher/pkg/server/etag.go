package server

import (
	"strconv"
	"strings"
)

// An answer of /api/v1/usage changes only with the round it is cut from:
// what changes with the clock — the answer's time, each node's sample age
// and stale flag — a client works out for itself from the sample times it
// kept. Its entity tag names the round (weak: the bytes differ from one
// request to the next), so a client that asks every few seconds gets
// 304 Not Modified between two rounds instead of every node again, and
// keeps what it made of the last answer. net/http handles conditional
// requests only in ServeContent, for content that can be sought; the
// answer is streamed.

// entityTag is the weak entity tag of the answers of round seq of the
// server started at epoch.
func entityTag(epoch string, seq uint64) string {
	return `W/"` + epoch + "-" + strconv.FormatUint(seq, 10) + `"`
}

// noneMatch reports whether an If-None-Match header lists tag, compared
// weakly (RFC 9110, 13.1.2), or is "*".
func noneMatch(header, tag string) bool {
	want := strings.TrimPrefix(tag, "W/")
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == want {
			return true
		}
	}
	return false
}
