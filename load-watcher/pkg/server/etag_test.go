package server

import "testing"

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
