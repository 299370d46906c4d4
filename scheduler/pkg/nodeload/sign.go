package nodeload

import (
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/ballast-sched/ballast/core/loadmodel"
)

// estimateSignature is what a plugin's estimate of a pod depends on: the
// estimate from its requests and, when pods are estimated by their running
// siblings, the workload whose siblings those are.
type estimateSignature struct {
	Requests   loadmodel.Amount `json:"requests"`
	Controller types.UID        `json:"controller,omitempty"`
}

// SignEstimate returns the signature fragment of plugin's estimate of pod
// with opts, for kube-scheduler's opportunistic batching (fwk.SignPlugin):
// two pods with equal fragments get the same estimate in the same cycle.
//
// A plugin whose Filter and Score depend only on this estimate, the node's
// usage and the pods pending on that node may sign pods with it: placing a
// pod changes the pending pods of the chosen node only, which is what
// batching assumes of every plugin. What batching does not see is a new
// usage sample arriving between two pods of a batch; a batch lives at most
// half a second, far less than load-watcher's sampling period, so at worst a
// pod is placed on usage half a second older than it would have been.
func (t *Tracker) SignEstimate(plugin string, pod *v1.Pod, opts loadmodel.EstimateOptions) fwk.SignFragment {
	sig := estimateSignature{Requests: loadmodel.EstimatePod(pod, opts)}
	if t.siblings != nil {
		if ref := metav1.GetControllerOf(pod); ref != nil {
			sig.Controller = ref.UID
		}
	}
	return fwk.SignFragment{Key: plugin + ".v1.Pod.UsageEstimate()", Value: sig}
}
