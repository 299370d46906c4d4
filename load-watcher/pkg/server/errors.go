package server

import (
	"encoding/json"
	"fmt"
	"net/http"

	"k8s.io/klog/v2"
)

// apiError is the JSON body of every non-2xx answer.
type apiError struct {
	// Code repeats the HTTP status code.
	Code int `json:"code"`
	// Reason is a stable CamelCase word for programs.
	Reason string `json:"reason"`
	// Message explains the error to people.
	Message string `json:"message"`
}

func (e *apiError) Error() string { return e.Message }

func badRequest(format string, args ...any) *apiError {
	return &apiError{Code: http.StatusBadRequest, Reason: "BadRequest", Message: fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, code int, reason, message string) {
	writeJSON(w, code, &apiError{Code: code, Reason: reason, Message: message})
}

func writeAPIError(w http.ResponseWriter, e *apiError) { writeJSON(w, e.Code, e) }

// because appends the collector's reason to a message, when there is one.
func because(message, reason string) string {
	if reason == "" {
		return message
	}
	return message + ": " + reason
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		klog.ErrorS(err, "Encoding response failed")
		code, body = http.StatusInternalServerError, []byte(`{"code":500,"reason":"InternalError","message":"encoding the response failed"}`)
	}
	writeBody(w, code, body)
}

func writeBody(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// getOnly answers 405 for anything but GET and HEAD.
func getOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", "method "+r.Method+" is not allowed; use GET")
			return
		}
		h(w, r)
	}
}

// recoverPanics turns a handler panic into a 500 instead of a dropped
// connection; it is a last resort, the handlers do not panic by design.
func recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				klog.ErrorS(fmt.Errorf("%v", p), "Handler panicked", "path", r.URL.Path)
				writeError(w, http.StatusInternalServerError, "InternalError", "internal error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}
