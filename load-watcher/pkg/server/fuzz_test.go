package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// FuzzQueryParameters sends arbitrary query strings to both data
// endpoints: every answer must be one of the documented status codes with
// a JSON body, and nothing may panic.
func FuzzQueryParameters(f *testing.F) {
	for _, seed := range []string{
		"", "host=agent-1", "host=nope", "host=", "host=a&host=b", "host=%zz", "hots=x",
		"node=old-1&window=5m", "window=10m", "window=-1s", "window=1e9h", "node=new-1", ";;&&==",
	} {
		f.Add(seed)
	}
	h := NewHandler(Options{Source: twoNodes(), Now: func() time.Time { return now }})
	f.Fuzz(func(t *testing.T, raw string) {
		for _, path := range []string{"/watcher", "/api/v1/usage"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.URL.RawQuery = raw
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			switch rec.Code {
			case http.StatusOK, http.StatusBadRequest, http.StatusNotFound:
			default:
				t.Fatalf("%s?%s: status %d", path, raw, rec.Code)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s?%s: body is not JSON: %q", path, raw, rec.Body.String())
			}
		}
	})
}
