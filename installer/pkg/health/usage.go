// Package health collects and prints the health of a Ballast installation:
// its Deployments, the k3s servers, the namespace opt-in, and the real usage
// of every node as load-watcher serves it to the scheduler.
package health

import (
	"context"
	"crypto/tls"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ballast-sched/ballast/core/client"
	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// fetchTimeout bounds the one request status makes to load-watcher.
const fetchTimeout = 10 * time.Second

// Usage is what load-watcher served, read with its own client: the answer
// is checked as the scheduler checks it and each node is stale when its
// newest sample is older than the scheduler's threshold
// (scheduler.loadWatcherStaleAfter of the release, LoadWatcher.StaleAfter).
type Usage struct {
	Snapshot *usage.Snapshot
	// Window is the window the table reads: LoadAware's default (5m) when
	// load-watcher keeps it, else the shortest one it keeps.
	Window usage.Window
	// Unsampled lists the cluster's nodes load-watcher has no usage for.
	Unsampled []string
}

// fetchUsage asks the load-watcher at address once through hc. nodes are
// the cluster's nodes, nil when they could not be listed: load-watcher's
// nodes outside the list are left out, the list's nodes without usage are
// Unsampled. A node is stale after staleAfter (zero:
// client.DefaultStaleAfter).
func fetchUsage(ctx context.Context, address string, hc *http.Client, nodes []string, staleAfter time.Duration) (*Usage, error) {
	cfg := client.Config{Address: address, HTTPClient: hc, Timeout: fetchTimeout, StaleAfter: staleAfter}
	if nodes != nil {
		cfg.NodeExists = func(name string) bool { return slices.Contains(nodes, name) }
	}
	snap, err := client.Fetch(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return newUsage(snap, nodes), nil
}

func newUsage(snap *usage.Snapshot, nodes []string) *Usage {
	u := &Usage{Snapshot: snap, Window: displayWindow(snap)}
	for _, n := range nodes {
		if _, ok := snap.Nodes[n]; !ok {
			u.Unsampled = append(u.Unsampled, n)
		}
	}
	slices.Sort(u.Unsampled)
	return u
}

// displayWindow is usage.Window5m when some node has it, else the shortest
// window any node has.
func displayWindow(snap *usage.Snapshot) usage.Window {
	var shortest usage.Window
	for _, n := range snap.Nodes {
		for w := range n.Windows {
			if w == usage.Window5m {
				return w
			}
			if shortest == 0 || w < shortest {
				shortest = w
			}
		}
	}
	if shortest == 0 {
		return usage.Window5m
	}
	return shortest
}

// fresh counts the nodes whose usage the scheduler trusts.
func (u *Usage) fresh() int {
	n := 0
	for _, nu := range u.Snapshot.Nodes {
		if !nu.Stale {
			n++
		}
	}
	return n
}

// Rows are the table's rows, sorted by node name, unsampled nodes included.
func (u *Usage) Rows(now time.Time) []NodeRow {
	stats := loadmodel.DefaultStatistics()
	rows := make([]NodeRow, 0, len(u.Snapshot.Nodes)+len(u.Unsampled))
	for name, n := range u.Snapshot.Nodes {
		r := NodeRow{Node: name, Sampled: now.Sub(n.SampleTime).Round(time.Second)}
		if n.Invalid != "" {
			// Numbers the scheduler refuses are not shown either.
			r.State = "refused (" + n.Invalid + "): placed by requests"
			rows = append(rows, r)
			continue
		}
		r.CPU, r.HasCPU = stats.Read(n, u.Window, usage.CPU)
		r.Memory, r.HasMemory = stats.Read(n, u.Window, usage.Memory)
		if n.Stale {
			r.State = "stale: placed by requests"
		}
		rows = append(rows, r)
	}
	for _, name := range u.Unsampled {
		rows = append(rows, NodeRow{Node: name, Sampled: -1, State: "no usage yet: placed by requests"})
	}
	slices.SortFunc(rows, func(a, b NodeRow) int { return strings.Compare(a.Node, b.Node) })
	return rows
}

// insecureClient reads load-watcher through a tunnel that the API server
// authenticates and that ends inside its pod: the certificate of an https
// load-watcher is not verified, as the API server's service proxy does not
// verify it either.
func insecureClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // see above
	return &http.Client{Transport: t}
}
