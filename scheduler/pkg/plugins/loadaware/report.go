package loadaware

import (
	"context"

	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// NodeReport, ResourceReport and ScoreReport are what Report fills: the
// types are explanation's, which `ballast explain` reads without linking the
// plugin.
type (
	NodeReport     = explanation.NodeReport
	ResourceReport = explanation.ResourceReport
	ScoreReport    = explanation.ScoreReport
)

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
