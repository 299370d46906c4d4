package health

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// readyzPath is load-watcher's readiness endpoint (server.ReadyzPath; the
// installer does not import load-watcher).
const readyzPath = "/readyz"

// maxReadyzBody bounds how much of /readyz is read.
const maxReadyzBody = 64 << 10

// Readiness is what load-watcher's /readyz answered: ready once a sampling
// round succeeded within its staleness threshold, else why not.
type Readiness struct {
	Ready bool `json:"ready"`
	// Reason says why load-watcher is not ready, e.g. "no successful sample
	// yet: metrics-server: …"; for an answer that is not load-watcher's
	// JSON, its body.
	Reason string `json:"reason,omitempty"`
	// LastError is the provider's error in the latest round.
	LastError string `json:"lastError,omitempty"`
	// NodesWithoutSamples are nodes the provider returned nothing usable for.
	NodesWithoutSamples []string `json:"nodesWithoutSamples,omitempty"`
}

// read asks the load-watcher at base for its usage and, when that has no
// fresh node or fails and askOnError is set (a pod reached through a
// port-forward answers /readyz even when not ready, a Service without ready
// endpoints does not), its readiness; nil when it was not or could not be
// read.
func read(ctx context.Context, base string, hc *http.Client, nodes []string, staleAfter time.Duration, askOnError bool) (*Usage, *Readiness, error) {
	u, err := fetchUsage(ctx, base, hc, nodes, staleAfter)
	if (err != nil && !askOnError) || (err == nil && u.fresh() > 0) {
		return u, nil, err
	}
	// Readiness only adds why usage is missing or stale.
	ready, _ := fetchReadiness(ctx, base, hc)
	return u, ready, err
}

// fetchReadiness reads load-watcher's /readyz, which answers 200 or 503
// with the same JSON body.
func fetchReadiness(ctx context.Context, base string, hc *http.Client) (*Readiness, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+readyzPath, nil)
	if err != nil {
		return nil, fmt.Errorf("ask load-watcher's %s: %w", readyzPath, err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("ask load-watcher's %s: %w", readyzPath, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxReadyzBody))
	if err != nil {
		return nil, fmt.Errorf("read load-watcher's %s: %w", readyzPath, err)
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusServiceUnavailable {
		return nil, fmt.Errorf("load-watcher's %s answered %s: %s", readyzPath, resp.Status, strings.TrimSpace(string(body)))
	}
	r := &Readiness{}
	if err := json.Unmarshal(body, r); err != nil {
		r = &Readiness{Reason: strings.TrimSpace(string(body))}
	}
	// The status code decides, as it does for the kubelet's probe.
	r.Ready = resp.StatusCode == http.StatusOK
	if !r.Ready && r.Reason == "" {
		r.Reason = resp.Status
	}
	return r, nil
}
