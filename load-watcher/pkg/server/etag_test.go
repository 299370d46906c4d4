package server

import (
	"net/http"
	"testing"
)

func TestNoneMatch(t *testing.T) {
	tag := entityTag("e1", 7)
	for _, tc := range []struct {
		header string
		want   bool
	}{
		{`W/"e1-7"`, true},
		{`"e1-7"`, true}, // compared weakly
		{`W/"e1-6", W/"e1-7"`, true},
		{`*`, true},
		{`W/"e1-6"`, false},
		{`W/"e2-7"`, false}, // another server's round 7
		{`W/"e1-70"`, false},
	} {
		if got := noneMatch(tc.header, tag); got != tc.want {
			t.Errorf("noneMatch(%q, %q) = %v, want %v", tc.header, tag, got, tc.want)
		}
	}
}

// A round a Collector did not number (collector.RoundOf) carries no tag:
// two such rounds could not be told apart, so every request is answered in
// full.
func TestUsageOfAnUnnumberedRoundHasNoTag(t *testing.T) {
	rec := get(t, twoNodes(), "/api/v1/usage")
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if tag := rec.Header().Get("ETag"); tag != "" {
		t.Errorf("ETag %q on a round without a number, want none", tag)
	}
}
