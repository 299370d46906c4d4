package balance

import v1 "k8s.io/api/core/v1"

// RunsToCompletion reports whether pod does a piece of work and ends — a
// Job's pod, a CronJob's run, anything whose restartPolicy is not Always.
// Such a pod is never moved: its replacement would start the work again
// from nothing (a backup, a media scan), and the pod frees its node by
// itself when the work is done.
func RunsToCompletion(pod *v1.Pod) bool {
	return pod.Spec.RestartPolicy != "" && pod.Spec.RestartPolicy != v1.RestartPolicyAlways
}
