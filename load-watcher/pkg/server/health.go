package server

import (
	"net/http"
	"time"
)

// readiness is the body of /readyz and /watcher/health.
type readiness struct {
	Ready               bool       `json:"ready"`
	Reason              string     `json:"reason,omitempty"`
	Rounds              int        `json:"rounds"`
	LastSuccess         *time.Time `json:"lastSuccess,omitempty"`
	LastError           string     `json:"lastError,omitempty"`
	NodesTracked        int        `json:"nodesTracked"`
	NodesWithoutSamples []string   `json:"nodesWithoutSamples"`
}

func (s *server) readiness() readiness {
	st := s.src.Status()
	r := readiness{
		Ready:               st.Ready,
		Reason:              st.Reason,
		Rounds:              st.Rounds,
		NodesTracked:        st.NodesTracked,
		NodesWithoutSamples: st.NodesWithoutSamples,
	}
	if r.NodesWithoutSamples == nil {
		r.NodesWithoutSamples = []string{}
	}
	if !st.LastSuccess.IsZero() {
		t := st.LastSuccess.UTC()
		r.LastSuccess = &t
	}
	if st.LastError != nil {
		r.LastError = st.LastError.Error()
	}
	return r
}

// healthz answers 200 while the process serves requests.
func (s *server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz answers 200 once a sampling round succeeded within the staleness
// threshold, 503 with the reason otherwise: a load-watcher whose provider
// is down is alive but not ready.
func (s *server) readyz(w http.ResponseWriter, _ *http.Request) {
	r := s.readiness()
	code := http.StatusOK
	if !r.Ready {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, r)
}

// watcherHealth keeps upstream's meaning of /watcher/health: 200 while the
// provider answers, 503 when its latest round failed or none ran yet.
func (s *server) watcherHealth(w http.ResponseWriter, _ *http.Request) {
	r := s.readiness()
	code := http.StatusOK
	if r.Rounds == 0 || r.LastError != "" {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, r)
}
