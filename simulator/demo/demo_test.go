package demo

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestPlacementSumsRunningPodsPerNode(t *testing.T) {
	nodes := []corev1.Node{node("pi-1", "4", "4Gi"), node("mini-pc", "8", "16Gi")}
	deleting := metav1.Now()
	pods := []corev1.Pod{
		pod("a", "pi-1", corev1.PodRunning, "250m", "256Mi", nil),
		pod("b", "pi-1", corev1.PodRunning, "500m", "1Gi", nil),
		pod("c", "mini-pc", corev1.PodRunning, "1", "2Gi", nil),
		pod("pending", "", corev1.PodPending, "1", "1Gi", nil),
		pod("terminating", "mini-pc", corev1.PodRunning, "2", "2Gi", &deleting),
		pod("elsewhere", "gone-node", corev1.PodRunning, "2", "2Gi", nil),
	}
	got := Placement(nodes, pods)
	want := []NodePlacement{
		// c only: the pending, terminating and unknown-node pods do not count.
		{Node: "mini-pc", Arch: "amd64", Pods: 1, CPURequested: resource.MustParse("1"), CPUAlloc: resource.MustParse("8"),
			MemRequested: resource.MustParse("2Gi"), MemAlloc: resource.MustParse("16Gi")},
		// a + b: 250m + 500m = 750m, 256Mi + 1Gi = 1280Mi.
		{Node: "pi-1", Arch: "amd64", Pods: 2, CPURequested: resource.MustParse("750m"), CPUAlloc: resource.MustParse("4"),
			MemRequested: resource.MustParse("1280Mi"), MemAlloc: resource.MustParse("4Gi")},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("Placement() mismatch (-want,+got):\n%s", diff)
	}
}

func TestWriteTableShowsRequestedShare(t *testing.T) {
	var buf bytes.Buffer
	rows := []NodePlacement{{Node: "pi-1", Arch: "arm64", Pods: 3,
		CPURequested: resource.MustParse("1"), CPUAlloc: resource.MustParse("4"),
		MemRequested: resource.MustParse("1Gi"), MemAlloc: resource.MustParse("4Gi")}}
	if err := WriteTable(&buf, rows); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d lines, want header + 1 row:\n%s", len(lines), buf.String())
	}
	// 1 of 4 CPUs and 1Gi of 4Gi: 25 % each.
	if fields := strings.Fields(lines[1]); !cmp.Equal(fields, []string{"pi-1", "arm64", "3", "1/4", "25%", "1Gi/4Gi", "25%"}) {
		t.Errorf("row = %q", fields)
	}
}

func node(name, cpu, mem string) corev1.Node {
	return corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"kubernetes.io/arch": "amd64"}},
		Status: corev1.NodeStatus{Allocatable: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
		}},
	}
}

func pod(name, nodeName string, phase corev1.PodPhase, cpu, mem string, deleted *metav1.Time) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, DeletionTimestamp: deleted},
		Spec: corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{
			Name: "c",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(mem),
			}},
		}}},
		Status: corev1.PodStatus{Phase: phase},
	}
}
