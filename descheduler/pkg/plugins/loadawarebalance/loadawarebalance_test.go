package loadawarebalance

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	promtestutil "github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/component-base/metrics/testutil"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/podusage"
	"github.com/ballast-sched/ballast/core/usage"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"
)

// args returns defaulted args changed by edit.
func args(edit func(*LoadAwareBalanceArgs)) *LoadAwareBalanceArgs {
	a := &LoadAwareBalanceArgs{}
	SetDefaults_LoadAwareBalanceArgs(a)
	if edit != nil {
		edit(a)
	}
	return a
}

func eager(a *LoadAwareBalanceArgs) { a.ConsecutiveHotCycles = ptrTo(int32(1)) }

// patient waits three hot cycles before evicting.
func patient(a *LoadAwareBalanceArgs) { a.ConsecutiveHotCycles = ptrTo(int32(3)) }

// twoPerNode is edit with at most two evictions per node and cycle, so that
// a test sees the pods evicted one cycle at a time.
func twoPerNode(edit func(*LoadAwareBalanceArgs)) func(*LoadAwareBalanceArgs) {
	return func(a *LoadAwareBalanceArgs) {
		edit(a)
		a.MaxEvictionsPerNode = ptrTo(int32(2))
	}
}

func unlimited(a *LoadAwareBalanceArgs) {
	a.ConsecutiveHotCycles = ptrTo(int32(1))
	a.MaxEvictionsPerNode = ptrTo(int32(100))
	a.MaxEvictionsPerNamespace = ptrTo(int32(100))
	a.MaxEvictionsPerCycle = ptrTo(int32(100))
}

var threeNodes = []*v1.Node{node("hot"), node("cool-a"), node("cool-b")}

// hotPods are ten pods of distinct workloads using 40 MiB (4 %) each.
func hotPods() []*v1.Pod {
	var pods []*v1.Pod
	for i := range 10 {
		name := string(rune('a' + i))
		pods = append(pods, pod("p-"+name, "hot", "rs-"+name, 40))
	}
	return pods
}

// hotUsage: hot at memory 95 %, the others cool.
var hotUsage = loads("hot", 40, 95, "cool-a", 10, 20, "cool-b", 10, 30)

func TestBalanceWaitsForConsecutiveHotCycles(t *testing.T) {
	h := newHarness(t, args(twoPerNode(patient)), threeNodes, hotPods()...)
	for i := 1; i <= 2; i++ {
		h.cycle(hotUsage)
		if len(h.Evicted) != 0 {
			t.Fatalf("cycle %d: evicted %v before the node was hot for 3 cycles", i, h.Evicted)
		}
	}
	h.cycle(hotUsage)
	// 2 = maxEvictionsPerNode; 95 − 2×4 = 87 % is still hot.
	if len(h.Evicted) != 2 {
		t.Fatalf("third hot cycle evicted %v, want 2 pods", h.Evicted)
	}
}

func TestBalanceSpikeResetsHysteresis(t *testing.T) {
	h := newHarness(t, args(patient), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	h.cycle(hotUsage)
	h.cycle(loads("hot", 40, 70, "cool-a", 10, 20, "cool-b", 10, 30))
	h.cycle(hotUsage)
	h.cycle(hotUsage)
	if len(h.Evicted) != 0 {
		t.Fatalf("evicted %v although the node was never hot 3 cycles in a row", h.Evicted)
	}
}

func TestBalanceStopsOnceProjectedUnderHighThreshold(t *testing.T) {
	h := newHarness(t, args(unlimited), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	// 95 → 91 → 87 → 83: the third eviction brings memory under 85 %.
	if len(h.Evicted) != 3 {
		t.Fatalf("evicted %v, want 3 pods", h.Evicted)
	}
}

func TestBalanceEvictsInCandidateOrder(t *testing.T) {
	pods := []*v1.Pod{
		pod("guaranteed-big", "hot", "rs-1", 80, func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Limits = p.Spec.Containers[0].Resources.Requests
		}),
		pod("burstable-big", "hot", "rs-2", 80),
		pod("burstable-small", "hot", "rs-3", 20),
		pod("high-priority", "hot", "rs-4", 10, func(p *v1.Pod) { p.Spec.Priority = ptrTo(int32(1000)) }),
	}
	h := newHarness(t, args(unlimited), threeNodes, pods...)
	h.cycle(hotUsage)
	// Burstable before Guaranteed, the larger first: 95 − 8 = 87, − 2 = 85
	// (not above 85 %, done). Priority 1000 would go last.
	if diff := cmp.Diff([]string{"burstable-big", "burstable-small"}, h.Evicted); diff != "" {
		t.Errorf("evicted (-want,+got):\n%s", diff)
	}
}

// A pod that uses next to nothing of what the node is over its limit on is
// passed over, however early the candidate order puts it: moving it would
// restart it and free nothing.
func TestBalanceMovesNoPodThatFreesNothing(t *testing.T) {
	idle := pod("idle", "hot", "rs-idle", 40, func(p *v1.Pod) { p.Spec.Priority = ptrTo(int32(-1)) })
	h := newHarness(t, args(unlimited), threeNodes, append(hotPods(), idle)...)
	// Half a MiB of memory is 0.05 % of the node; the others use what
	// they ask for.
	h.podUsage["idle"] = loadmodel.Amount{MilliCPU: 1, Memory: mib / 2}
	h.cycle(hotUsage)
	// 95 → 91 → 87 → 83 by the other pods, as without the idle one.
	if got := h.Evicted; len(got) != 3 || slices.Contains(got, "idle") {
		t.Errorf("evicted %v, want 3 pods and not the idle one, which frees 0.05 %% of the node's memory", got)
	}
	if got := h.skipped(balance.SkipNoRelief); got != 1 {
		t.Errorf("skipped{reason=%q} = %v, want 1", balance.SkipNoRelief, got)
	}
}

// A node over a high threshold on its window's mean whose newest sample is
// back at the cluster's mean (a process outside Kubernetes stopped) is
// cooling by itself: nothing moves off it. A newest sample under the
// threshold but above the mean is what a noisy node shows: it sheds.
func TestBalanceLeavesANodeCoolingByItself(t *testing.T) {
	h := newHarness(t, args(unlimited), threeNodes, hotPods()...)
	// The mean of cpu is (95 + 10 + 10) / 3 ≈ 38 %.
	cpuHot := loads("hot", 95, 40, "cool-a", 10, 20, "cool-b", 10, 30)
	h.source.Latest = map[string]balance.NodeLoad{"hot": {usage.CPU: 30}}
	h.cycle(cpuHot)
	if len(h.Evicted) != 0 {
		t.Fatalf("evicted %v off a node whose newest sample (cpu 30 %%) is under the cluster's mean", h.Evicted)
	}
	h.source.Latest = map[string]balance.NodeLoad{"hot": {usage.CPU: 60}}
	h.cycle(cpuHot)
	if len(h.Evicted) == 0 {
		t.Fatal("evicted nothing off a node over the high threshold on its mean, its newest sample (cpu 60 %) above the cluster's mean")
	}
}

func TestBalanceNeedsADestination(t *testing.T) {
	tainted := func(n *v1.Node) {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	}
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		usage map[string]balance.NodeLoad
	}{
		{
			// 88 %: over the high threshold (85), under the scheduler's
			// (90): relief goes to cool nodes only.
			name:  "other nodes are warm, not cool",
			nodes: threeNodes,
			pods:  hotPods(),
			usage: loads("hot", 40, 88, "cool-a", 10, 70, "cool-b", 10, 61),
		},
		{
			name:  "cool nodes are tainted",
			nodes: []*v1.Node{node("hot"), node("cool-a", tainted), node("cool-b", tainted)},
			pods:  hotPods(),
			usage: hotUsage,
		},
		{
			name:  "node selector matches only the hot node",
			nodes: threeNodes,
			pods: []*v1.Pod{pod("pinned", "hot", "rs-1", 40, func(p *v1.Pod) {
				p.Spec.NodeSelector = map[string]string{v1.LabelHostname: "hot"}
			})},
			usage: hotUsage,
		},
		{
			name:  "cool nodes are cordoned",
			nodes: []*v1.Node{node("hot"), node("cool-a", cordon), node("cool-b", cordon)},
			pods:  hotPods(),
			usage: hotUsage,
		},
		{
			name:  "the pod would make every cool node hot",
			nodes: threeNodes,
			// 700 MiB is 70 %: 20 + 70 and 30 + 70 are both above 85 %.
			pods:  []*v1.Pod{pod("huge", "hot", "rs-1", 700)},
			usage: hotUsage,
		},
		{
			name:  "the pod's requests do not fit on the cool nodes",
			nodes: []*v1.Node{node("hot"), node("cool-a", tiny), node("cool-b", tiny)},
			pods:  hotPods(),
			usage: hotUsage,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, args(eager), tc.nodes, tc.pods...)
			h.cycle(tc.usage)
			if len(h.Evicted) != 0 {
				t.Errorf("evicted %v without a destination", h.Evicted)
			}
			if got := h.skipped(balance.SkipNoDestination); got < 1 {
				t.Errorf("skipped{reason=no-destination} = %v, want at least 1", got)
			}
		})
	}
}

// TestBalanceOverTheSchedulersThreshold: a node the scheduler no longer
// places pods on (95 % memory, over its 90) sheds pods to any node that
// stays under its limits with them, warm ones included, until the scheduler
// would place pods on it again; from there on only cool nodes take its pods.
func TestBalanceOverTheSchedulersThreshold(t *testing.T) {
	h := newHarness(t, args(unlimited), threeNodes, hotPods()...)
	h.cycle(loads("hot", 40, 95, "cool-a", 10, 70, "cool-b", 10, 61))
	// 95 − 4 = 91, still over 90; − 4 = 87: under 90, over 85, and no node
	// is cool.
	if len(h.Evicted) != 2 {
		t.Errorf("evicted %v, want two pods moved to the warm nodes", h.Evicted)
	}
}

// TestBalanceShedsOnlyToTheSchedulersThreshold: a node that its pods
// cannot bring under the high threshold (a process outside Kubernetes uses
// most of it) sheds pods until the scheduler would place pods on it again,
// and keeps the rest: moving them too would free room the scheduler refills.
func TestBalanceShedsOnlyToTheSchedulersThreshold(t *testing.T) {
	var pods []*v1.Pod
	for _, name := range []string{"a", "b", "c", "d"} {
		pods = append(pods, pod("p-"+name, "hot", "rs-"+name, 20))
	}
	h := newHarness(t, args(unlimited), threeNodes, pods...)
	// 95 % with four pods of 2 %: 87 % without them, over 85 whatever moves.
	// Under the scheduler's 90 after three: 95 − 3 × 2 = 89.
	h.cycle(loads("hot", 40, 95, "cool-a", 10, 20, "cool-b", 10, 30))
	if len(h.Evicted) != 3 {
		t.Errorf("evicted %v, want three pods: the node under 90 %%, one pod left", h.Evicted)
	}
}

func cordon(n *v1.Node) { n.Spec.Unschedulable = true }

// tiny nodes have 50m CPU allocatable, less than a test pod requests.
func tiny(n *v1.Node) {
	n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("50m")
}

func TestBalanceChoosesTheBestScoredDestination(t *testing.T) {
	h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { eager(a); a.MaxEvictionsPerNode = ptrTo(int32(1)) }), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	m := h.plugin.Deps.Store.Destinations()
	if len(m) != 1 || m[0] != "cool-a" {
		t.Fatalf("moves %+v, want one to cool-a (memory 20 %% beats 30 %%)", m)
	}
}

// Pods that started on a destination after its window was sampled count
// on it, as the scheduler counts the pods bound since its sample: cool-a
// reads 20 % memory but three pods of 10 % each just started there, so
// 50 %; cool-b, at 30 %, is where the scheduler will place the pod.
func TestBalanceCountsPodsTheWindowDoesNotShowYet(t *testing.T) {
	h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { eager(a); a.MaxEvictionsPerNode = ptrTo(int32(1)) }), threeNodes, hotPods()...)
	for _, name := range []string{"fresh-1", "fresh-2", "fresh-3"} {
		h.Add(pod(name, "cool-a", "rs-fresh", 100, func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(h.clock.Now()) }))
	}
	h.cycle(hotUsage)
	if m := h.plugin.Deps.Store.Destinations(); len(m) != 1 || m[0] != "cool-b" {
		t.Fatalf("moves %+v, want one to cool-b (30 %%; cool-a is at 20 %% + 30 %% just started)", m)
	}
}

func TestBalanceStaleUsage(t *testing.T) {
	t.Run("stale hot node is not hot", func(t *testing.T) {
		h := newHarness(t, args(eager), threeNodes, hotPods()...)
		h.cycle(hotUsage, "hot")
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v from a node with stale usage", h.Evicted)
		}
		if got := h.skipped(balance.SkipStale); got != 1 {
			t.Errorf("skipped{reason=stale} = %v, want 1", got)
		}
	})
	t.Run("hot node whose data the client refused is not hot", func(t *testing.T) {
		h := newHarness(t, args(eager), threeNodes, hotPods()...)
		h.source.Set(h.clock.Now(), hotUsage)
		n := h.source.Snapshot().Nodes["hot"]
		n.Stale, n.Invalid = true, "nodes[hot].windows[5m][cpu].latest: Invalid value: 3700: above 500 % of allocatable"
		h.source.Snapshot().Nodes["hot"] = n
		h.plugin.Balance(h.ctx, h.nodes)
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v from a node with refused usage", h.Evicted)
		}
		if got := h.skipped(balance.SkipInvalid); got != 1 {
			t.Errorf("skipped{reason=invalid} = %v, want 1", got)
		}
	})
	t.Run("stale cool nodes are no destination", func(t *testing.T) {
		h := newHarness(t, args(eager), threeNodes, hotPods()...)
		h.cycle(hotUsage, "cool-a", "cool-b")
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v towards nodes with stale usage", h.Evicted)
		}
	})
	t.Run("no snapshot at all", func(t *testing.T) {
		h := newHarness(t, args(eager), threeNodes, hotPods()...)
		h.plugin.Balance(h.ctx, h.nodes)
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v without any usage", h.Evicted)
		}
	})
	t.Run("window missing from the snapshot", func(t *testing.T) {
		h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { eager(a); a.Window = &metav1.Duration{Duration: time.Minute} }), threeNodes, hotPods()...)
		h.cycle(hotUsage)
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v although the 1m window had no samples", h.Evicted)
		}
	})
}

func TestBalanceCooldownAndPingPong(t *testing.T) {
	pods := []*v1.Pod{pod("web-1", "hot", "web", 40), pod("web-2", "hot", "web", 40), pod("web-3", "hot", "web", 40)}
	h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { eager(a); a.MaxEvictionsPerNode = ptrTo(int32(1)) }), threeNodes, pods...)
	h.cycle(hotUsage)
	if len(h.Evicted) != 1 {
		t.Fatalf("first cycle evicted %v, want 1 pod", h.Evicted)
	}
	// The replacement lands back on the hot node.
	h.Add(pod("web-4", "hot", "web", 40, func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(h.clock.Now()) }))
	h.cycle(hotUsage)
	h.cycle(hotUsage)
	if len(h.Evicted) != 1 {
		t.Errorf("evicted %v within the cooldown, want only the first pod", h.Evicted)
	}
	if got := h.skipped(balance.SkipCooldown); got < 2 {
		t.Errorf("skipped{reason=cooldown} = %v, want at least 2", got)
	}
	if got := h.Counter(h.metrics.PingPong, PluginName, "hot"); got != 1 {
		t.Errorf("pingpong{node=hot} = %v, want 1 (counted once)", got)
	}
	h.clock.Step(10 * time.Minute)
	h.cycle(hotUsage)
	if len(h.Evicted) != 2 {
		t.Errorf("evicted %v after the cooldown, want a second pod", h.Evicted)
	}
}

// A pod moved off a hot node found room on cool-a; then a process outside
// Kubernetes filled cool-a. Hot with the rest of it grown by far more than
// the pod brought, cool-a sheds that pod too, back to the node it came
// from, which has cooled: the move was overtaken, and undoing it is no
// loop. Hot because the pod brought a little more than expected, cool-a
// keeps it for the cooldown.
func TestBalanceMovesOnWhenAMovesDestinationHeatsByItself(t *testing.T) {
	for _, tc := range []struct {
		name string
		// atMove and memory are cool-a's memory when the pod is moved
		// there and five minutes later, once the window shows the move.
		atMove, memory int
		moved          bool
	}{
		// 95 − the pod's 4 = 91, up 71 from 20.
		{name: "destination heated by something else", atMove: 20, memory: 95, moved: true},
		// 86 − 4 = 82, up 3 from 79: no more than the pod's own 4.
		{name: "destination hot with the pod, little else changed", atMove: 79, memory: 86},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := moveWebOntoCoolA(t, 40, tc.atMove)
			// Within the eviction cooldown, cool-a is hot and hot has cooled.
			h.clock.Step(5 * time.Minute)
			h.cycle(loads("hot", 10, 30, "cool-a", 40, tc.memory, "cool-b", 10, 84))
			moved := slices.Contains(h.Evicted, "web-3")
			if moved != tc.moved {
				t.Fatalf("evicted %v: moved web-3 off cool-a = %v, want %v", h.Evicted, moved, tc.moved)
			}
			if m := h.plugin.Deps.Store.Destinations(); moved && (len(m) != 2 || m[1] != "hot") {
				t.Errorf("moves to %v, want the second back to hot", m)
			}
		})
	}
}

// moveWebOntoCoolA runs one cycle in which hot (memory 95 %) moves a pod of
// web (two pods of memMiB each) to cool-a, at memory atMove % then, and
// cool-b is too full to take it; others are more pods. The replacement,
// web-3, then runs on cool-a.
func moveWebOntoCoolA(t *testing.T, memMiB int64, atMove int, others ...*v1.Pod) *harness {
	t.Helper()
	pods := append([]*v1.Pod{pod("web-1", "hot", "web", memMiB), pod("web-2", "hot", "web", memMiB)}, others...)
	h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { eager(a); a.MaxEvictionsPerNode = ptrTo(int32(1)) }), threeNodes, pods...)
	h.cycle(loads("hot", 40, 95, "cool-a", 10, atMove, "cool-b", 10, 84))
	if m := h.plugin.Deps.Store.Destinations(); len(h.Evicted) != 1 || len(m) != 1 || m[0] != "cool-a" {
		t.Fatalf("first cycle evicted %v to %v, want one pod to cool-a", h.Evicted, m)
	}
	h.Add(pod("web-3", "cool-a", "web", memMiB, func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(h.clock.Now()) }))
	return h
}

// A pod moved onto cool-a 25 minutes ago — past evictionCooldown, within
// balanceCooldown — is on a node that is hot now, from the pod itself
// (little else changed) or from something else (the move overtaken). Either
// way cool-a sheds another workload's pod first, though the moved one frees
// more: that workload has restarted once already.
func TestBalanceMovesAWorkloadMovedOntoTheNodeLast(t *testing.T) {
	for _, tc := range []struct {
		name string
		// atMove and memory are cool-a's memory when the pod is moved
		// there and 25 minutes later.
		atMove, memory int
	}{
		// 90 − the pod's 8 = 82, up 6 from 76: cool-a is hot with the pod.
		{name: "hot with the pod", atMove: 76, memory: 90},
		// 95 − 8 = 87, up 67 from 20: something else heated cool-a.
		{name: "heated by something else", atMove: 20, memory: 95},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := moveWebOntoCoolA(t, 80, tc.atMove, pod("db-1", "cool-a", "db", 40))
			h.clock.Step(25 * time.Minute)
			h.cycle(loads("hot", 10, 30, "cool-a", 40, tc.memory, "cool-b", 10, 84))
			if slices.Contains(h.Evicted, "web-3") {
				t.Errorf("evicted %v: moved web-3 on from cool-a 25 minutes after moving it there, want db-1 moved instead", h.Evicted)
			}
			if !slices.Contains(h.Evicted, "db-1") {
				t.Errorf("evicted %v, want db-1 moved off hot cool-a", h.Evicted)
			}
		})
	}
}

// A Job's pod (a backup, a scan) does its work and ends; moving it would
// start the work again from nothing. A hot node keeps it and sheds another
// pod, however much more the Job's pod uses.
func TestBalanceLeavesPodsThatRunToCompletion(t *testing.T) {
	backup := pod("backup-28971-x", "hot", "", 300, func(p *v1.Pod) {
		controller := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "backup-28971", UID: "job-1", Controller: &controller}}
		p.Spec.RestartPolicy = v1.RestartPolicyNever
	})
	scan := pod("scan", "hot", "scan", 300, func(p *v1.Pod) { p.Spec.RestartPolicy = v1.RestartPolicyOnFailure })
	h := newHarness(t, args(unlimited), threeNodes, backup, scan, pod("web-1", "hot", "web", 40))
	h.cycle(hotUsage)
	if diff := cmp.Diff([]string{"web-1"}, h.evictedSorted()); diff != "" {
		t.Errorf("evicted (-want +got):\n%s", diff)
	}
}

func TestBalanceProjectsWithMeasuredPodUsage(t *testing.T) {
	h := newHarness(t, args(unlimited), threeNodes, hotPods()...)
	// The pods ask for 40 MiB (4 %) and use 80 MiB (8 %): 95 → 87 → 79.
	for _, p := range hotPods() {
		h.podUsage[p.Name] = loadmodel.Amount{MilliCPU: 10, Memory: 80 << 20}
	}
	h.cycle(hotUsage)
	if len(h.Evicted) != 2 {
		t.Fatalf("evicted %v, want 2 pods: measured usage frees twice the requests", h.Evicted)
	}
	if got := h.Counter(h.metrics.PodUsageEstimated, PluginName); got != 0 {
		t.Errorf("pod_usage_estimated_total = %v, want 0 with every pod measured", got)
	}
}

func TestBalanceFallsBackToRequestsWithoutPodMetrics(t *testing.T) {
	h := newHarness(t, args(unlimited), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	// 95 → 91 → 87 → 83 by requests, as without a metrics API.
	if len(h.Evicted) != 3 {
		t.Fatalf("evicted %v, want 3 pods", h.Evicted)
	}
	if got := h.Counter(h.metrics.PodUsageEstimated, PluginName); got != 10 {
		t.Errorf("pod_usage_estimated_total = %v, want 10 (every candidate of the hot node)", got)
	}
}

// Both cool nodes are cool on average but peak over the high threshold
// within the window (a job outside Kubernetes that comes and goes): no
// destination, nothing evicted.
func TestBalanceSkipsDestinationsThatPeak(t *testing.T) {
	h := newHarness(t, args(unlimited), threeNodes, hotPods()...)
	h.source.Peaks = map[string]balance.NodeLoad{"cool-a": {usage.Memory: 90}, "cool-b": {usage.CPU: 85}}
	h.cycle(hotUsage)
	if len(h.Evicted) != 0 {
		t.Fatalf("evicted %v towards nodes that peak over the high thresholds", h.Evicted)
	}
	if h.skipped("no-destination") == 0 {
		t.Error("no skipped{reason=no-destination}")
	}
}

func TestSizeShares(t *testing.T) {
	big := node("big", func(n *v1.Node) {
		n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("12")
		n.Status.Allocatable[v1.ResourceMemory] = *resource.NewQuantity(1000*balancetest.MiB, resource.BinarySI)
	})
	got := sizeShares([]*v1.Node{node("small"), big})
	// CPU 4 and 12 of 16, memory half each: (0.25+0.5)/2 and (0.75+0.5)/2.
	want := map[string]float64{"small": 0.375, "big": 0.625}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("sizeShares (-want,+got):\n%s", diff)
	}
}

func TestBalanceLimits(t *testing.T) {
	twoHot := []*v1.Node{node("hot"), node("hot-2"), node("cool-a"), node("cool-b")}
	var pods []*v1.Pod
	pods = append(pods, hotPods()...)
	for _, name := range []string{"q-a", "q-b", "q-c", "q-d"} {
		pods = append(pods, pod(name, "hot-2", "rs-"+name, 40))
	}
	usage := loads("hot", 40, 99, "hot-2", 40, 99, "cool-a", 5, 5, "cool-b", 5, 5)
	tests := []struct {
		name string
		edit func(*LoadAwareBalanceArgs)
		want int
	}{
		{name: "per node", edit: func(a *LoadAwareBalanceArgs) { unlimited(a); a.MaxEvictionsPerNode = ptrTo(int32(1)) }, want: 2},
		{name: "per cycle", edit: func(a *LoadAwareBalanceArgs) { unlimited(a); a.MaxEvictionsPerCycle = ptrTo(int32(3)) }, want: 3},
		{name: "per namespace", edit: func(a *LoadAwareBalanceArgs) { unlimited(a); a.MaxEvictionsPerNamespace = ptrTo(int32(2)) }, want: 2},
		{name: "defaults", want: 5}, // five per cycle: four cool hot (99 − 4×4 = 83 %), one from hot-2
		{name: "three hot cycles", edit: patient, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, args(tc.edit), twoHot, pods...)
			h.cycle(usage)
			if len(h.Evicted) != tc.want {
				t.Errorf("evicted %v, want %d pods", h.Evicted, tc.want)
			}
		})
	}
}

func TestBalanceDryRunEvictsNothing(t *testing.T) {
	h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { eager(a); a.DryRun = true }), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	h.cycle(hotUsage)
	if len(h.Evicted) != 0 {
		t.Errorf("dry run evicted %v", h.Evicted)
	}
	if n := len(h.plugin.Deps.Store.Destinations()); n != 0 {
		t.Errorf("dry run remembered %d moves", n)
	}
}

func TestBalanceDisruptionRefusalTriesNextPod(t *testing.T) {
	h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { eager(a); a.MaxEvictionsPerNode = ptrTo(int32(1)) }), threeNodes, hotPods()...)
	// All candidates are equal, so names decide: p-a is first.
	h.Refuse["p-a"] = true
	h.cycle(hotUsage)
	if diff := cmp.Diff([]string{"p-b"}, h.Evicted); diff != "" {
		t.Errorf("evicted (-want,+got):\n%s", diff)
	}
	if got := h.skipped(balance.SkipPDB); got != 1 {
		t.Errorf("skipped{reason=pdb} = %v, want 1", got)
	}
}

func TestBalanceNamespaces(t *testing.T) {
	system := func(p *v1.Pod) { p.Namespace = metav1.NamespaceSystem }
	pods := []*v1.Pod{pod("sys-1", "hot", "rs-1", 40, system), pod("sys-2", "hot", "rs-2", 40, system)}
	t.Run("kube-system excluded by default", func(t *testing.T) {
		h := newHarness(t, args(eager), threeNodes, pods...)
		h.cycle(hotUsage)
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v from kube-system", h.Evicted)
		}
	})
	t.Run("include list", func(t *testing.T) {
		edit := func(a *LoadAwareBalanceArgs) {
			eager(a)
			a.Namespaces = &api.Namespaces{Include: []string{"default"}}
		}
		h := newHarness(t, args(edit), threeNodes, append(pods, pod("app", "hot", "rs-3", 40))...)
		h.cycle(hotUsage)
		if diff := cmp.Diff([]string{"app"}, h.Evicted); diff != "" {
			t.Errorf("evicted (-want,+got):\n%s", diff)
		}
	})
}

// Only pods a Ballast scheduler places again are moved: any other pod's
// replacement would be placed without regard to usage, maybe back on the
// hot node. The candidates are equal, so names decide the order and the
// pods of other schedulers come first.
func TestBalanceMovesOnlyPodsOfSchedulerNames(t *testing.T) {
	placedBy := func(scheduler string) func(*v1.Pod) {
		return func(p *v1.Pod) { p.Spec.SchedulerName = scheduler }
	}
	pods := []*v1.Pod{
		pod("a-bootstrap", "hot", "rs-1", 40, placedBy("ballast-bootstrap")),
		pod("b-default", "hot", "rs-2", 40, placedBy("default-scheduler")),
		pod("c-unnamed", "hot", "rs-3", 40, placedBy("")),
		pod("d-batch", "hot", "rs-4", 40, placedBy("ballast-batch")),
		pod("e-ballast", "hot", "rs-5", 40),
		pod("f-ballast", "hot", "rs-6", 40),
	}
	tests := []struct {
		name           string
		schedulerNames []string
		want           []string
		wantSkipped    float64
	}{
		{
			name: "default: ballast-scheduler alone",
			want: []string{"e-ballast", "f-ballast"}, wantSkipped: 4,
		},
		{
			name:           "second mode with an extra profile",
			schedulerNames: []string{"ballast-scheduler", "ballast-batch"},
			want:           []string{"d-batch", "e-ballast"}, wantSkipped: 3,
		},
		{
			// A pod without a schedulerName is default-scheduler's; the
			// bootstrap scheduler's pods are never Ballast's.
			name:           "replaceDefault mode",
			schedulerNames: []string{"ballast-scheduler", "default-scheduler"},
			want:           []string{"b-default", "c-unnamed"}, wantSkipped: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			edit := func(a *LoadAwareBalanceArgs) {
				twoPerNode(eager)(a)
				if tc.schedulerNames != nil {
					a.SchedulerNames = tc.schedulerNames
				}
			}
			h := newHarness(t, args(edit), threeNodes, pods...)
			h.cycle(hotUsage)
			if diff := cmp.Diff(tc.want, h.Evicted); diff != "" {
				t.Errorf("evicted (-want,+got):\n%s", diff)
			}
			if got := h.skipped(balance.SkipOtherScheduler); got != tc.wantSkipped {
				t.Errorf("skipped{reason=other-scheduler} = %v, want %v", got, tc.wantSkipped)
			}
		})
	}
}

func TestBalanceAccountsForMovesTheWindowDoesNotShowYet(t *testing.T) {
	h := newHarness(t, args(twoPerNode(func(a *LoadAwareBalanceArgs) {
		eager(a)
		a.ThresholdStatistics = loadmodel.Statistics{usage.CPU: loadmodel.Average, usage.Memory: loadmodel.Average}
	})), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	// The window average still reads 95 % a minute later: the two pods that
	// left (8 %) are subtracted for the part of the window that predates
	// them, 95 − 8 × (1 − 1/5) = 88.6 %: hot, but one more pod is enough.
	h.cycle(hotUsage)
	if len(h.Evicted) != 3 {
		t.Errorf("evicted %v, want 3 pods in two cycles", h.Evicted)
	}
}

// Memory read on its newest sample (the default): a sample taken within the
// two evicted pods' grace period (30 s) may still hold them, so they are
// subtracted whole, 95 − 8 = 87 %: one more pod. A sample taken after the
// third was gone shows the node as it is, still 95 % (something else
// grew): two more go, where the window's fraction would have credited the
// node with the pods that left for five minutes.
func TestBalanceAccountsForMovesTheNewestSampleDoesNotShowYet(t *testing.T) {
	h := newHarness(t, args(twoPerNode(eager)), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	h.source.Set(h.clock.Now().Add(-45*time.Second), hotUsage)
	h.plugin.Balance(h.ctx, h.nodes)
	h.waitGone(h.Evicted...)
	if len(h.Evicted) != 3 {
		t.Fatalf("evicted %v, want 3 pods in two cycles: the second cycle's sample is from the pods' grace period", h.Evicted)
	}
	h.clock.Step(time.Minute)
	h.cycle(hotUsage)
	if len(h.Evicted) != 5 {
		t.Errorf("evicted %v, want 5 pods in three cycles: the third cycle's sample is newer than the pods' going", h.Evicted)
	}
}

func TestBalanceRecordsEvictionMetricAndEvents(t *testing.T) {
	h := newHarness(t, args(twoPerNode(eager)), threeNodes, hotPods()...)
	h.cycle(hotUsage)
	if got := h.Counter(h.metrics.Evictions, PluginName, "hot-memory", "hot"); got != 2 {
		t.Errorf("evictions{reason=hot-memory,node=hot} = %v, want 2", got)
	}
	// Two events per evicted pod: the descheduler's eviction, whose reason
	// says why and where it should go, and Ballast's, which says it with
	// the figures and what the move is expected to make of both nodes.
	want := []string{
		"Normal memory 95 over 85 pct on hot; expected destination cool-a pod eviction from hot node by sigs.k8s.io/descheduler",
		"Normal BallastMoved Moved off hot by LoadAwareBalance: memory 95.0% over its high threshold 85.0%; expected destination cool-a; " +
			"expected after the move: hot memory 95.0% → 91.0%, cool-a memory 24.0%",
		"Normal memory 91 over 85 pct on hot; expected destination cool-a pod eviction from hot node by sigs.k8s.io/descheduler",
		"Normal BallastMoved Moved off hot by LoadAwareBalance: memory 91.0% over its high threshold 85.0%; expected destination cool-a; " +
			"expected after the move: hot memory 91.0% → 87.0%, cool-a memory 28.0%",
	}
	if diff := cmp.Diff(want, h.RecordedEvents()); diff != "" {
		t.Errorf("events (-want,+got):\n%s", diff)
	}
}

// A pod whose memory keeps growing past its request is not moved, whatever
// it would relieve: it would heat any node it lands on. Ballast warns about it instead, once
// an hour, and keeps its growth in a metric while it grows.
func TestBalanceLeavesGrowingPodsAndWarns(t *testing.T) {
	h := newHarness(t, args(unlimited), threeNodes, hotPods()...)
	// p-a grows 5 MiB/min; p-b 0.5, under the 1Mi default.
	h.growth["p-a"] = podusage.Growth{BytesPerMinute: 5 * mib, Over: 12 * time.Minute, First: 200 * mib, Last: 260 * mib}
	h.growth["p-b"] = podusage.Growth{BytesPerMinute: mib / 2, Over: 12 * time.Minute, First: 200 * mib, Last: 206 * mib}
	// p-c grows as fast as p-a but within its 40 MiB request (a cache
	// warming up): room the scheduler reserved for it, no leak.
	h.growth["p-c"] = podusage.Growth{BytesPerMinute: 5 * mib, Over: 6 * time.Minute, First: 8 * mib, Last: 38 * mib}
	h.cycle(hotUsage)
	if diff := cmp.Diff([]string{"p-b", "p-c", "p-d"}, h.evictedSorted()); diff != "" {
		t.Errorf("evicted (-want,+got):\n%s", diff)
	}
	if got := h.skipped(balance.SkipGrowing); got != 1 {
		t.Errorf("skipped{reason=growing} = %v, want 1", got)
	}
	if v, err := testutil.GetGaugeMetricValue(h.metrics.MemoryGrowth.WithLabelValues("default", "p-a", "hot")); err != nil || v != 5 {
		t.Errorf("pod_memory_growth_mib_per_minute{pod=p-a} = %v (%v), want 5", v, err)
	}
	var warnings []string
	for _, e := range h.RecordedEvents() {
		if strings.HasPrefix(e, "Warning "+balance.ReasonMemoryGrowing) {
			warnings = append(warnings, e)
		}
	}
	want := []string{"Warning MemoryGrowing memory grows 5.0 MiB/min, 200 MiB to 260 MiB in 12m0s; not moved: it would fill any node it lands on"}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want,+got):\n%s", diff)
	}
	// The next cycle warns no more; the metric stays while the pod grows
	// and goes once it stops.
	h.cycle(hotUsage)
	for _, e := range h.RecordedEvents() {
		if strings.Contains(e, balance.ReasonMemoryGrowing) {
			t.Errorf("warned again within the hour: %s", e)
		}
	}
	delete(h.growth, "p-a")
	h.cycle(hotUsage)
	if n := promtestutil.CollectAndCount(h.metrics.MemoryGrowth.GaugeVec); n != 0 {
		t.Errorf("%d growth series once no pod grows, want 0", n)
	}
}

// TestMetricsStartAtZero: a dashboard summing skipped candidates by reason
// or bounces by node shows 0 before the first one, not no data.
func TestMetricsStartAtZero(t *testing.T) {
	h := newHarness(t, args(patient), threeNodes, hotPods()...)
	if n, want := promtestutil.CollectAndCount(h.metrics.SkippedCandidates.CounterVec), len(balance.SkipReasons); n != want {
		t.Errorf("skipped candidates have %d series before the first cycle, want %d (one per reason)", n, want)
	}
	h.cycle(hotUsage)
	if n, want := promtestutil.CollectAndCount(h.metrics.PingPong.CounterVec), len(threeNodes); n != want {
		t.Errorf("bounces have %d series after a cycle, want %d (one per node)", n, want)
	}
	if v, err := testutil.GetCounterMetricValue(h.metrics.PingPong.WithLabelValues(PluginName, threeNodes[0].Name)); err != nil || v != 0 {
		t.Errorf("bounces onto %s = %v (%v), want 0", threeNodes[0].Name, v, err)
	}
}

// A move's note names the high threshold the node crossed, with the
// figures, for every resource over it.
func TestMoveNoteNamesTheLimitsCrossed(t *testing.T) {
	high := balance.ResourceThresholds{usage.CPU: 80, usage.Memory: 85}
	after := balance.NodeLoad{usage.Memory: 84.5}
	dest := balance.NodeLoad{usage.Memory: 35}
	for _, tc := range []struct {
		name string
		over []usage.Resource
		load balance.NodeLoad
		want []string
	}{
		{"memory", []usage.Resource{usage.Memory}, balance.NodeLoad{usage.Memory: 94.6}, []string{"memory 94.6% over its high threshold 85.0%;"}},
		{"both", []usage.Resource{usage.CPU, usage.Memory}, balance.NodeLoad{usage.CPU: 91, usage.Memory: 94.6},
			[]string{"cpu 91.0% over its high threshold 80.0%, memory 94.6% over its high threshold 85.0%;"}},
	} {
		got := moveNote(overLimits(tc.over, tc.load, high), tc.over, tc.load, "a", "b", after, dest)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", tc.name, got, w)
			}
		}
	}
}

// A move off a node over its high threshold is judged at the destination by
// what it does there: the destination must stay under the high thresholds
// with the pod, not under the source's limit lowered to the mean plus the
// deviation. The 450 MiB pod puts cool-a at 65 %, over the mean plus the
// deviation (44.3 + 20) but far under 85: the hot node is relieved.
func TestBalanceRelievesAHotNodeUpToTheDestinationsHighThreshold(t *testing.T) {
	h := newHarness(t, args(memoryDeviation(20)), threeNodes, pod("big", "hot", "rs-big", 450))
	h.cycle(loads("hot", 40, 88, "cool-a", 10, 20, "cool-b", 10, 25))
	if diff := cmp.Diff([]string{"big"}, h.evictedSorted()); diff != "" {
		t.Fatalf("evicted (-want +got):\n%s", diff)
	}
	if m := h.plugin.Deps.Store.Destinations(); len(m) != 1 || m[0] != "cool-a" {
		t.Errorf("moves %+v, want one to cool-a", m)
	}
	// Over the high threshold at the destination, it stays.
	h = newHarness(t, args(memoryDeviation(20)), threeNodes, pod("big", "hot", "rs-big", 450))
	h.cycle(loads("hot", 40, 88, "cool-a", 10, 45, "cool-b", 10, 45))
	if len(h.Evicted) != 0 {
		t.Errorf("evicted %v to a node the pod would put over 85 %%", h.Evicted)
	}
}

// memoryDeviation sets no eviction limits and a memory deviation of points
// over the cluster's mean.
func cpuAndMemoryDeviation(points float64) func(*LoadAwareBalanceArgs) {
	return func(a *LoadAwareBalanceArgs) {
		unlimited(a)
		a.DeviationThresholds = balance.ResourceThresholds{"cpu": points, "memory": points}
	}
}

func memoryDeviation(points float64) func(*LoadAwareBalanceArgs) {
	return func(a *LoadAwareBalanceArgs) {
		unlimited(a)
		a.DeviationThresholds = balance.ResourceThresholds{"memory": points}
	}
}

// A pod whose volume is kept on its node (k3s's local-path provisioner: a
// hostPath volume with node affinity to the node) is never evicted off a
// hot node: its replacement could only come back, or stay Pending. The
// node sheds another pod instead, and the skip is counted.
func TestBalanceLeavesAPodItsVolumePins(t *testing.T) {
	claim := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-db-0", Namespace: "default"},
		Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pvc-db"}}
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pvc-db"}, Spec: v1.PersistentVolumeSpec{
		PersistentVolumeSource: v1.PersistentVolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/var/lib/rancher/k3s/storage/pvc-db"}},
		NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
			MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{"hot"}}}}}}}}}
	withClaim := func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data-db-0"}}})
	}
	nodes := []*v1.Node{node("hot", func(n *v1.Node) { n.Labels[v1.LabelHostname] = "hot" }), node("cool-a"), node("cool-b")}
	// db uses the most of the node: without its volume it would go first.
	h := newHarnessWith(t, args(unlimited), nodes, []runtime.Object{claim, pv},
		pod("db", "hot", "rs-db", 200, withClaim), pod("web", "hot", "rs-web", 120))
	h.cycle(loads("hot", 40, 95, "cool-a", 10, 20, "cool-b", 10, 30))
	if diff := cmp.Diff([]string{"web"}, h.Evicted); diff != "" {
		t.Errorf("evicted (-want,+got):\n%s", diff)
	}
	if got := h.skipped(balance.SkipPinned); got != 1 {
		t.Errorf("pinned skips = %v, want 1", got)
	}
}
