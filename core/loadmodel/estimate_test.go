package loadmodel

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func container(req, limit v1.ResourceList) v1.Container {
	return v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: req, Limits: limit}}
}

func rl(cpu, mem string) v1.ResourceList {
	l := v1.ResourceList{}
	if cpu != "" {
		l[v1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		l[v1.ResourceMemory] = resource.MustParse(mem)
	}
	return l
}

func TestEstimatePod(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	opts := EstimateOptions{RequestMultiplier: 1.5, DefaultMilliCPU: 100, DefaultMemory: 200 << 20}
	tests := []struct {
		name string
		spec v1.PodSpec
		opts EstimateOptions
		want Amount
	}{
		{
			// 200m × 1.5 = 300m; 100Mi × 1.5 = 150Mi
			name: "requests scaled by the multiplier",
			spec: v1.PodSpec{Containers: []v1.Container{container(rl("200m", "100Mi"), nil)}},
			opts: opts,
			want: Amount{MilliCPU: 300, Memory: 150 << 20},
		},
		{
			// 200m × 1.5 = 300m capped at limit 250m; memory 100Mi × 1.5 = 150Mi under 1Gi
			name: "limit caps the scaled request",
			spec: v1.PodSpec{Containers: []v1.Container{container(rl("200m", "100Mi"), rl("250m", "1Gi"))}},
			opts: opts,
			want: Amount{MilliCPU: 250, Memory: 150 << 20},
		},
		{
			// no request: the limit, 1 CPU and 64Mi
			name: "limit without request",
			spec: v1.PodSpec{Containers: []v1.Container{container(nil, rl("1", "64Mi"))}},
			opts: opts,
			want: Amount{MilliCPU: 1000, Memory: 64 << 20},
		},
		{
			// two best-effort containers: 2 × 100m, 2 × 200Mi
			name: "defaults for containers without requests",
			spec: v1.PodSpec{Containers: []v1.Container{container(nil, nil), container(nil, nil)}},
			opts: opts,
			want: Amount{MilliCPU: 200, Memory: 400 << 20},
		},
		{
			// memory requested (100Mi × 1.5), CPU defaulted (100m)
			name: "default only for the missing resource",
			spec: v1.PodSpec{Containers: []v1.Container{container(rl("", "100Mi"), nil)}},
			opts: opts,
			want: Amount{MilliCPU: 100, Memory: 150 << 20},
		},
		{
			// app 100m×1.5=150m + sidecar 50m×1.5=75m + overhead 10m; ordinary init ignored.
			// memory: app default 200Mi + sidecar default 200Mi + overhead 1Mi
			name: "sidecars and overhead count, init containers do not",
			spec: v1.PodSpec{
				Containers: []v1.Container{container(rl("100m", ""), nil)},
				InitContainers: []v1.Container{
					container(rl("4", "4Gi"), nil),
					{Name: "sidecar", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: rl("50m", "")}},
				},
				Overhead: rl("10m", "1Mi"),
			},
			opts: opts,
			want: Amount{MilliCPU: 235, Memory: 401 << 20},
		},
		{
			// 200m × 1e300 and 100Mi × 1e300 are beyond int64: as much as it
			// holds, for both containers together too, never less than nothing
			name: "an estimate beyond int64 stays at its largest",
			spec: v1.PodSpec{Containers: []v1.Container{container(rl("200m", "100Mi"), nil), container(rl("1", ""), nil)}},
			opts: EstimateOptions{RequestMultiplier: 1e300, DefaultMemory: 1},
			want: Amount{MilliCPU: math.MaxInt64, Memory: math.MaxInt64},
		},
		{
			// a multiplier of 0 is not valid: requests are used as they are
			name: "invalid multiplier leaves requests unchanged",
			spec: v1.PodSpec{Containers: []v1.Container{container(rl("200m", "100Mi"), nil)}},
			opts: EstimateOptions{},
			want: Amount{MilliCPU: 200, Memory: 100 << 20},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := EstimatePod(&v1.Pod{Spec: tt.spec}, tt.opts)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("EstimatePod() mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	always := v1.ContainerRestartPolicyAlways
	tests := []struct {
		name string
		spec v1.PodSpec
		want Amount
	}{
		{
			// 100m + 200m; 64Mi + 0
			name: "sum of containers",
			spec: v1.PodSpec{Containers: []v1.Container{container(rl("100m", "64Mi"), nil), container(rl("200m", ""), nil)}},
			want: Amount{MilliCPU: 300, Memory: 64 << 20},
		},
		{
			// max(containers 100m, init 1) = 1 CPU; max(64Mi, 32Mi) = 64Mi
			name: "large init container dominates",
			spec: v1.PodSpec{
				Containers:     []v1.Container{container(rl("100m", "64Mi"), nil)},
				InitContainers: []v1.Container{container(rl("1", "32Mi"), nil)},
			},
			want: Amount{MilliCPU: 1000, Memory: 64 << 20},
		},
		{
			// containers 100m + sidecar 50m = 150m, then + overhead 10m
			name: "sidecar adds, overhead adds",
			spec: v1.PodSpec{
				Containers:     []v1.Container{container(rl("100m", ""), nil)},
				InitContainers: []v1.Container{{Name: "s", RestartPolicy: &always, Resources: v1.ResourceRequirements{Requests: rl("50m", "")}}},
				Overhead:       rl("10m", ""),
			},
			want: Amount{MilliCPU: 160},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, PodRequests(&v1.Pod{Spec: tt.spec})); diff != "" {
				t.Errorf("PodRequests() mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}
