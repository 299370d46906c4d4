// Package explanation is what ballast-scheduler says of a pod it would
// place: where, and why not elsewhere, node by node. The scheduler serves it
// on its explain endpoint (explain.Handler); `ballast explain pod` reads it
// there, through the API server's port-forward to the scheduler's pod,
// without linking the scheduler.
package explanation

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ballast-sched/ballast/core/usage"
)

// DefaultPort is the port of the scheduler's explain endpoint, which it
// serves on its pod's loopback interface only: a user reaches it through
// the API server (pods/portforward), as its authorization allows.
const DefaultPort = 10261

// PodPath is the path the explanation of a pod is served at:
// PodPath + NAMESPACE + "/" + NAME. The answer is a Response in JSON.
const PodPath = "/explain/v1/pods/"

// Response is the endpoint's answer: the explanation of a pod, and the
// usage it was made with.
type Response struct {
	// Explanation is where the scheduler would place the pod now.
	Explanation *Explanation `json:"explanation,omitempty"`
	// UsageTime is when the usage the scheduler places by was assembled;
	// nil when it has none (it then places by requests alone).
	UsageTime *time.Time `json:"usageTime,omitempty"`
	// Error says why there is no explanation.
	Error string `json:"error,omitempty"`
}

// Explanation says where the scheduler would place a pod now and why, node
// by node: the filter that rejects a node with its reasons, LoadAware's
// figures, and each score plugin's score.
type Explanation struct {
	// Profile is the scheduler profile that places the pod (its
	// schedulerName); empty when no profile of the configuration does, and
	// OtherScheduler then says so.
	Profile        string `json:"profile,omitempty"`
	OtherScheduler bool   `json:"otherScheduler,omitempty"`
	// Best are the feasible nodes with the highest total score: the
	// scheduler picks one of them.
	Best []string `json:"best,omitempty"`
	// PreFilter is the reason every node is rejected before the per-node
	// filters run, if one is.
	PreFilter *Verdict `json:"preFilter,omitempty"`
	// Nodes are every node of the cluster, the best first.
	Nodes []NodeExplanation `json:"nodes"`
}

// Verdict is a plugin's rejection: which plugin and why.
type Verdict struct {
	Plugin  string   `json:"plugin"`
	Reasons []string `json:"reasons"`
}

// NodeExplanation is one node's part in the placement.
type NodeExplanation struct {
	Name string `json:"name"`
	// Feasible is true when every filter passes the node.
	Feasible bool `json:"feasible"`
	// Rejected is the first filter that rejects the node, as the
	// scheduler reports it; nil when feasible.
	Rejected *Verdict `json:"rejected,omitempty"`
	// Load is LoadAware's view of the node, when the profile runs it.
	Load *NodeReport `json:"load,omitempty"`
	// Scores are the weighted scores of each score plugin, for feasible
	// nodes; Total their sum.
	Scores []PluginScore `json:"scores,omitempty"`
	Total  int64         `json:"total,omitempty"`
}

// PluginScore is one score plugin's score of a node, weighted.
type PluginScore struct {
	Plugin string `json:"plugin"`
	Score  int64  `json:"score"`
}

// NodeReport is LoadAware's view of one node for one pod, with the figures
// behind its filter verdict and its score: what `ballast explain` shows.
type NodeReport struct {
	// Exempt is true when the thresholds do not apply to the pod (a
	// DaemonSet pod, or a system-critical one without filterCriticalPods).
	Exempt bool `json:"exempt,omitempty"`
	// Unavailable says why the node's usage cannot be used (stale, missing,
	// invalid): LoadAware then lets the node through and scores it neutral,
	// and placement on it falls back to requests.
	Unavailable string `json:"unavailable,omitempty"`
	// Window is the load-watcher window the figures come from.
	Window string `json:"window"`
	// Resources are the predictions of the resources filtered or scored.
	Resources []ResourceReport `json:"resources,omitempty"`
	// Rejected is true when LoadAware's filter rejects the node.
	Rejected bool `json:"rejected"`
	// Score is LoadAware's score and its terms; nil when not scored (the
	// node did not pass the filters).
	Score *ScoreReport `json:"score,omitempty"`
}

// ResourceReport is the predicted usage of one resource on a node, in
// percent of its allocatable.
type ResourceReport struct {
	Resource  usage.Resource `json:"resource"`
	Statistic string         `json:"statistic"`
	// Current is the node's measured usage, Pending what pods bound since
	// that sample add, Pod the pod's estimate; Predicted their sum.
	Current   float64 `json:"current"`
	Pending   float64 `json:"pending"`
	Pod       float64 `json:"pod"`
	Predicted float64 `json:"predicted"`
	// Threshold is the filter's threshold; 0 when the resource is scored
	// only.
	Threshold float64 `json:"threshold,omitempty"`
	// Over is true when Predicted exceeds Threshold.
	Over bool `json:"over,omitempty"`
}

// ScoreReport is LoadAware's score of a node, term by term (each 0–100)
// with their weights; Total is their weighted mean, as Score returns it.
type ScoreReport struct {
	Strategy    string  `json:"strategy"`
	Usage       float64 `json:"usage"`
	UsageWeight float64 `json:"usageWeight"`
	Risk        float64 `json:"risk,omitempty"`
	RiskWeight  float64 `json:"riskWeight,omitempty"`
	Pods        float64 `json:"pods,omitempty"`
	PodsWeight  float64 `json:"podsWeight,omitempty"`
	// FreePods and MostFreePods are the pod slots the pods term compares.
	FreePods     int64 `json:"freePods,omitempty"`
	MostFreePods int64 `json:"mostFreePods,omitempty"`
	Total        int64 `json:"total"`
}

// Get asks the explain endpoint at base (http://HOST:PORT) to explain the pod
// namespace/name.
func Get(ctx context.Context, client *http.Client, base, namespace, name string) (*Response, error) {
	u := strings.TrimSuffix(base, "/") + PodPath + url.PathEscape(namespace) + "/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking the scheduler: %w", err)
	}
	defer resp.Body.Close()
	var out Response
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(&out); err != nil {
		return nil, fmt.Errorf("reading the scheduler's answer (HTTP %d): %w", resp.StatusCode, err)
	}
	if out.Error != "" {
		return nil, fmt.Errorf("the scheduler: %s", out.Error)
	}
	if resp.StatusCode != http.StatusOK || out.Explanation == nil {
		return nil, fmt.Errorf("the scheduler answered HTTP %d without an explanation", resp.StatusCode)
	}
	return &out, nil
}

// maxResponse bounds an answer read: a node's explanation is well under a
// kilobyte, and clusters Ballast runs on have at most a few thousand.
const maxResponse = 64 << 20
