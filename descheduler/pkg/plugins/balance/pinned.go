package balance

import (
	"fmt"
	corelisters "k8s.io/client-go/listers/core/v1"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"
)

// selectedNode is the annotation the volume scheduler sets on a claim whose
// volume is provisioned for the node its first pod was placed on
// (WaitForFirstConsumer), until the volume is bound.
const selectedNode = "volume.kubernetes.io/selected-node"

// Volumes reads the claims and volumes a pod's volumes name.
type Volumes interface {
	Claim(namespace, name string) (*v1.PersistentVolumeClaim, error)
	Volume(name string) (*v1.PersistentVolume, error)
}

// PinnedBy says why pod cannot run anywhere but on the node it runs on
// because of its volumes, or "" when it can: a claim bound to a volume whose
// node affinity admits none of nodes but that one (a local volume, k3s's
// local-path provisioner, any volume kept on one machine), or a claim whose
// volume is being provisioned for that node. A claim or volume that cannot
// be read pins the pod too: moving a stateful pod on a guess would be an
// outage, not a restart. A pod on no node, or with no claim, is not pinned.
func PinnedBy(pod *v1.Pod, nodes []*v1.Node, vols Volumes) string {
	on := pod.Spec.NodeName
	if on == "" || vols == nil {
		return ""
	}
	for _, vol := range pod.Spec.Volumes {
		pvc := vol.PersistentVolumeClaim
		if pvc == nil {
			continue
		}
		claim, err := vols.Claim(pod.Namespace, pvc.ClaimName)
		if err != nil {
			return fmt.Sprintf("pinned by its volume: claim %s cannot be read (%v)", pvc.ClaimName, err)
		}
		if claim.Spec.VolumeName == "" {
			if n := claim.Annotations[selectedNode]; n == on {
				return fmt.Sprintf("pinned by its volume: claim %s is being provisioned on %s", claim.Name, on)
			}
			continue
		}
		pv, err := vols.Volume(claim.Spec.VolumeName)
		if err != nil {
			return fmt.Sprintf("pinned by its volume: volume %s of claim %s cannot be read (%v)", claim.Spec.VolumeName, claim.Name, err)
		}
		if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
			continue
		}
		sel, err := nodeaffinity.NewNodeSelector(pv.Spec.NodeAffinity.Required)
		if err != nil {
			return fmt.Sprintf("pinned by its volume: volume %s has a node affinity that cannot be read (%v)", pv.Name, err)
		}
		elsewhere := false
		for _, n := range nodes {
			if n.Name != on && sel.Match(n) {
				elsewhere = true
				break
			}
		}
		if !elsewhere {
			return fmt.Sprintf("pinned by its volume: volume %s of claim %s is reachable from %s alone", pv.Name, claim.Name, on)
		}
	}
	return ""
}

// WithoutPinned returns pods without those their volumes keep on their node
// (PinnedBy), each counted as skipped (pinned): evicting one would restart it
// for nothing, or leave it Pending. nodes are every node a pod could go to.
func (p *Plugin) WithoutPinned(logger klog.Logger, plugin string, pods []*v1.Pod, nodes []*v1.Node) []*v1.Pod {
	if p.Volumes == nil {
		return pods
	}
	out := pods[:0:0]
	for _, pod := range pods {
		if why := PinnedBy(pod, nodes, p.Volumes); why != "" {
			p.Deps.Metrics.SkippedCandidates.WithLabelValues(plugin, SkipPinned).Inc()
			logger.V(2).Info("Skipping eviction candidate: "+why, "pod", klog.KObj(pod), "skipReason", SkipPinned)
			continue
		}
		out = append(out, pod)
	}
	return out
}

// listedVolumes reads claims and volumes from the descheduler's informers.
type listedVolumes struct {
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
}

func (l listedVolumes) Claim(namespace, name string) (*v1.PersistentVolumeClaim, error) {
	return l.claims.PersistentVolumeClaims(namespace).Get(name)
}

func (l listedVolumes) Volume(name string) (*v1.PersistentVolume, error) { return l.volumes.Get(name) }
