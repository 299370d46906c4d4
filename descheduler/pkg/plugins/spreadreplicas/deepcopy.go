package spreadreplicas

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
)

// DeepCopyInto copies the receiver into out.
func (in *SpreadReplicasArgs) DeepCopyInto(out *SpreadReplicasArgs) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	if in.HighThresholds != nil {
		out.HighThresholds = make(loadawarebalance.ResourceThresholds, len(in.HighThresholds))
		for k, v := range in.HighThresholds {
			out.HighThresholds[k] = v
		}
	}
	if in.EvictionCooldown != nil {
		out.EvictionCooldown = &metav1.Duration{Duration: in.EvictionCooldown.Duration}
	}
	for _, p := range []struct{ dst **int32 }{{&out.MaxEvictionsPerNode}, {&out.MaxEvictionsPerNamespace}, {&out.MaxEvictionsPerCycle}} {
		if *p.dst != nil {
			v := **p.dst
			*p.dst = &v
		}
	}
	if in.Window != nil {
		out.Window = &metav1.Duration{Duration: in.Window.Duration}
	}
	if in.Namespaces != nil {
		out.Namespaces = in.Namespaces.DeepCopy()
	}
	// make, not append: an empty list stays empty, and validation refuses it
	// instead of defaulting it.
	if in.SchedulerNames != nil {
		out.SchedulerNames = make([]string, len(in.SchedulerNames))
		copy(out.SchedulerNames, in.SchedulerNames)
	}
}

// DeepCopy returns a copy of the receiver.
func (in *SpreadReplicasArgs) DeepCopy() *SpreadReplicasArgs {
	if in == nil {
		return nil
	}
	out := new(SpreadReplicasArgs)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *SpreadReplicasArgs) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}
