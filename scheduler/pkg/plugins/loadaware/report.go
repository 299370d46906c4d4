package loadaware

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

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

// Report returns LoadAware's view of nodeInfo for pod in the cycle of cs:
// the figures Filter compares with the thresholds and, when scored (after
// PreScore), the terms of Score. It runs the same code as Filter and Score.
func (pl *LoadAware) Report(ctx context.Context, cs fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo, scored bool) NodeReport {
	r := NodeReport{Exempt: pl.exempt(pod), Window: pl.window.String()}
	s := pl.state(ctx, cs, pod, nodeInfo)
	e := s.Table.Node(nodeInfo, s.NowNano)
	figures := pl.reported()
	if cause := e.Cause(resourcesOf(figures)...); cause != nodeload.CauseNone {
		r.Unavailable = string(cause)
	} else if !e.Fresh {
		r.Unavailable = string(nodeload.CauseStale)
	}
	var buf [2]loadmodel.Prediction
	if preds, ok := pl.predict(buf[:0], e, nodeload.Allocatable(nodeInfo), s.PodEst, figures); ok {
		for i, p := range preds {
			f := figures[i]
			rr := ResourceReport{Resource: f.resource, Statistic: string(f.stat), Current: p.Current, Pending: p.Pending, Pod: p.Pod,
				Predicted: p.Total(), Threshold: f.threshold}
			rr.Over = f.threshold > 0 && p.Exceeds(f.threshold)
			r.Rejected = r.Rejected || (rr.Over && !r.Exempt)
			r.Resources = append(r.Resources, rr)
		}
	}
	if scored {
		ns := pl.score(buf[:0], s, nodeInfo, klog.Logger{})
		r.Score = &ScoreReport{Strategy: string(pl.strategy), Usage: ns.usage, UsageWeight: pl.usageWeight, Risk: ns.risk,
			RiskWeight: pl.riskWeight, Pods: ns.pods, PodsWeight: pl.podCountWeight, FreePods: ns.free, MostFreePods: s.mostFree,
			Total: ns.total}
	}
	return r
}

// reported are the resources a report shows: those filtered, then those
// scored only.
func (pl *LoadAware) reported() []resourceFigure {
	out := append([]resourceFigure(nil), pl.checks...)
	for _, f := range pl.figures {
		if _, checked := pl.thresholds[f.resource]; !checked {
			out = append(out, f)
		}
	}
	return out
}

func resourcesOf(figures []resourceFigure) []usage.Resource {
	out := make([]usage.Resource, len(figures))
	for i, f := range figures {
		out[i] = f.resource
	}
	return out
}
