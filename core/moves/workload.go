package moves

import (
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Workload names what keeps a pod running: its replacement comes from the
// same workload, which is what eviction memory must recognise.
type Workload struct {
	Namespace, Kind, Name string
}

func (w Workload) String() string { return w.Namespace + "/" + w.Kind + "/" + w.Name }

// WorkloadOf returns the pod's controlling workload. A ReplicaSet created by
// a Deployment stands for the Deployment, so a rollout between two cycles
// does not make the memory forget. Pods without a controller have none.
func WorkloadOf(pod *v1.Pod) (Workload, bool) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return Workload{}, false
	}
	w := Workload{Namespace: pod.Namespace, Kind: ref.Kind, Name: ref.Name}
	if hash := pod.Labels[appsv1.DefaultDeploymentUniqueLabelKey]; ref.Kind == "ReplicaSet" && hash != "" {
		if name, ok := strings.CutSuffix(ref.Name, "-"+hash); ok && name != "" {
			w.Kind, w.Name = "Deployment", name
		}
	}
	return w, true
}
