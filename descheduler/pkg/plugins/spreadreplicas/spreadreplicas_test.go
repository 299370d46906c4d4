package spreadreplicas

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"
)

// args returns defaulted args changed by edit.
func args(edit func(*SpreadReplicasArgs)) *SpreadReplicasArgs {
	a := &SpreadReplicasArgs{}
	SetDefaults_SpreadReplicasArgs(a)
	if edit != nil {
		edit(a)
	}
	return a
}

var twoNodes = []*v1.Node{node("node-a"), node("node-b")}

// quiet: both nodes far under every threshold.
var quiet = loads("node-a", 20, 30, "node-b", 5, 10)

// Six replicas on node-a, none on node-b: 3 move in the first cycle (6/0
// to 3/3), then 3/3 is left alone. With two per node and cycle, 2 move in
// the first cycle and 1 in the second (4 vs 2).
func TestSpreadsReplicasOntoNewNode(t *testing.T) {
	h := newHarness(t, args(nil), twoNodes, replicaPods("web", "node-a", 6)...)
	if got := h.cycle(quiet); len(got) != 3 || !allFrom("node-a", got) {
		t.Fatalf("first cycle evicted %v, want 3 pods from node-a", got)
	}
	for i := range 3 {
		h.add(replica(fmt.Sprintf("web-new-%d", i), "node-b", "web"))
	}
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v at 3/3", got)
	}
	if v := h.Counter(h.metrics.Evictions, PluginName, "spread", "node-a"); v != 3 {
		t.Errorf("evictions metric = %v, want 3", v)
	}
	// Each move says why, in a BallastMoved event as LoadAwareBalance's do.
	var moved []string
	for _, e := range h.RecordedEvents() {
		if strings.HasPrefix(e, "Normal BallastMoved ") {
			moved = append(moved, strings.TrimPrefix(e, "Normal BallastMoved "))
		}
	}
	if want := "Moved off node-a by SpreadReplicas: default/ReplicaSet/web has 6 replicas on node-a, 0 on node-b; expected destination node-b; " +
		"expected after the move: 5 on node-a, 1 on node-b"; len(moved) != 3 || moved[0] != want {
		t.Errorf("BallastMoved events %q, want 3, the first %q", moved, want)
	}

	h = newHarness(t, args(func(a *SpreadReplicasArgs) { a.MaxEvictionsPerNode = ptrTo(int32(2)) }), twoNodes, replicaPods("web", "node-a", 6)...)
	if got := h.cycle(quiet); len(got) != 2 || !allFrom("node-a", got) {
		t.Fatalf("two per node: first cycle evicted %v, want 2 pods from node-a", got)
	}
	h.add(replica("web-new-0", "node-b", "web"))
	h.add(replica("web-new-1", "node-b", "web"))
	if got := h.cycle(quiet); len(got) != 1 || !allFrom("node-a", got) {
		t.Fatalf("two per node: second cycle evicted %v, want 1 pod from node-a", got)
	}
}

// node-b is cool on average but a job outside Kubernetes lifts its memory
// to 92 % for a while in every window: no destination.
func TestLeavesANodeThatPeaksAlone(t *testing.T) {
	h := newHarness(t, args(nil), twoNodes, replicaPods("web", "node-a", 6)...)
	h.source.Peaks = map[string]balance.NodeLoad{"node-b": {usage.Memory: 92}}
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v towards a node that peaks over the high threshold", got)
	}
	if v := h.Counter(h.metrics.SkippedCandidates, PluginName, "no-destination"); v == 0 {
		t.Error("no skipped{reason=no-destination} for the peaking node")
	}
}

// node-b peaks at 79 % memory (a backup job), under the high threshold,
// while node-a never exceeds its 30 %: moving replicas there would make the
// node whose load comes and goes the busier of the two whenever it runs.
func TestLeavesANodeWhoseLoadComesAndGoesAlone(t *testing.T) {
	h := newHarness(t, args(nil), twoNodes, replicaPods("web", "node-a", 6)...)
	h.source.Peaks = map[string]balance.NodeLoad{"node-b": {usage.CPU: 5, usage.Memory: 79}}
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v towards a node that peaks above the source", got)
	}
}

// A node four times the size holds six replicas at 30 %, a small one two
// at 20 %. Each replica asks for 100m and 40 MiB but uses four times that:
// moving one would lift the small node to 30 % CPU and 36 % memory, above
// the big node's 30 %. Replicas follow capacity, not counts.
func TestReplicasFollowNodeSizes(t *testing.T) {
	big := node("big", func(n *v1.Node) {
		n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("16")
		n.Status.Allocatable[v1.ResourceMemory] = *resource.NewQuantity(4000*mib, resource.BinarySI)
	})
	pods := append(replicaPods("web", "big", 6), replicaPods("web", "small", 2)...)
	h := newHarness(t, args(nil), []*v1.Node{big, node("small")}, pods...)
	h.podUsage = loadmodel.Amount{MilliCPU: 400, Memory: 160 * mib}
	if got := h.cycle(loads("big", 30, 30, "small", 20, 20)); len(got) != 0 {
		t.Fatalf("evicted %v from the big node although the small one would end hotter", got)
	}
	// The small node cooler: a replica moves.
	if got := h.cycle(loads("big", 30, 30, "small", 5, 5)); len(got) == 0 {
		t.Fatal("no replica moved to the cool small node")
	}
}

func TestEvictsNothingWithoutAGoodDestination(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		loads map[string]balance.NodeLoad
		stale []string
	}{
		// 4 vs 3: moving one only swaps the counts.
		{name: "difference of one", nodes: twoNodes,
			pods: append(replicaPods("web", "node-a", 4), replicaPods("web", "node-b", 3)...), loads: quiet},
		// The memory-hog case: node-b is over 85 % memory by usage its pods do not explain.
		{name: "destination hot", nodes: twoNodes, pods: replicaPods("web", "node-a", 6),
			loads: loads("node-a", 20, 30, "node-b", 5, 90)},
		// 83 + 4 = 87 % with the pod: over the 85 % memory threshold.
		{name: "destination would be hot with the pod", nodes: twoNodes, pods: replicaPods("web", "node-a", 6),
			loads: loads("node-a", 20, 30, "node-b", 5, 83)},
		// node-b is cooler than the threshold but hotter than node-a: the
		// scheduler would put the replacement back on node-a.
		{name: "destination hotter than the source", nodes: twoNodes, pods: replicaPods("web", "node-a", 6),
			loads: loads("node-a", 10, 10, "node-b", 40, 40)},
		{name: "destination usage stale", nodes: twoNodes, pods: replicaPods("web", "node-a", 6),
			loads: quiet, stale: []string{"node-b"}},
		{name: "every node stale", nodes: twoNodes, pods: replicaPods("web", "node-a", 6),
			loads: quiet, stale: []string{"node-a", "node-b"}},
		{name: "destination cordoned", nodes: []*v1.Node{node("node-a"), node("node-b", cordoned)},
			pods: replicaPods("web", "node-a", 6), loads: quiet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, args(nil), tc.nodes, tc.pods...)
			if got := h.cycle(tc.loads, tc.stale...); len(got) != 0 {
				t.Fatalf("evicted %v", got)
			}
		})
	}
}

// A pod that started on node-b after its window was sampled counts there,
// as the scheduler counts the pods bound since its sample: node-b reads 10 %
// memory, but with the 800 MiB (80 %) pod that just started it is over the
// 85 % threshold, so web stays. The same pod started long before the
// sample is in the usage already, and web spreads.
func TestCountsPodsTheWindowDoesNotShowYet(t *testing.T) {
	for _, tc := range []struct {
		name    string
		started time.Time
		want    int
	}{
		{name: "just started", started: time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC), want: 0},
		{name: "in the usage", started: created, want: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fresh := balancetest.Pod("fresh", "node-b", "fresh", 800, func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(tc.started) })
			h := newHarness(t, args(nil), twoNodes, append(replicaPods("web", "node-a", 6), fresh)...)
			if got := h.cycle(quiet); len(got) != tc.want {
				t.Fatalf("evicted %v, want %d pods of web", got, tc.want)
			}
		})
	}
}

func TestNoDestinationIsCounted(t *testing.T) {
	h := newHarness(t, args(nil), twoNodes, replicaPods("web", "node-a", 6)...)
	h.cycle(loads("node-a", 20, 30, "node-b", 5, 90))
	if v := h.Counter(h.metrics.SkippedCandidates, PluginName, balance.SkipNoDestination); v == 0 {
		t.Error("no skipped candidate recorded with reason no-destination")
	}
}

func TestDryRunEvictsNothing(t *testing.T) {
	h := newHarness(t, args(func(a *SpreadReplicasArgs) { a.DryRun = true }), twoNodes, replicaPods("web", "node-a", 6)...)
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("dry run evicted %v", got)
	}
}

func TestRespectsNamespaceExclusion(t *testing.T) {
	h := newHarness(t, args(func(a *SpreadReplicasArgs) { a.Namespaces.Exclude = []string{"default"} }),
		twoNodes, replicaPods("web", "node-a", 6)...)
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v from an excluded namespace", got)
	}
}

// othersOf returns n replicas of rs on nodeName that default-scheduler
// placed, named rs-other-nodeName-i.
func othersOf(rs, nodeName string, n int) []*v1.Pod {
	var out []*v1.Pod
	for i := range n {
		p := replica(fmt.Sprintf("%s-other-%s-%d", rs, nodeName, i), nodeName, rs)
		p.Spec.SchedulerName = v1.DefaultSchedulerName
		out = append(out, p)
	}
	return out
}

// prioritized gives pods priority 1, so that the replicas without one are
// the first candidates.
func prioritized(pods []*v1.Pod) []*v1.Pod {
	for _, p := range pods {
		p.Spec.Priority = ptrTo(int32(1))
	}
	return pods
}

// Only replicas a Ballast scheduler places again are moved; the others
// still count on their node.
func TestMovesOnlyReplicasOfSchedulerNames(t *testing.T) {
	for _, tc := range []struct {
		name           string
		schedulerNames []string
		pods           []*v1.Pod
		// wantBallast and wantOther count the evicted replicas of
		// ballast-scheduler and of default-scheduler.
		wantBallast, wantOther int
		wantSkipped            float64
	}{
		{name: "replicas of another scheduler stay", pods: othersOf("web", "node-a", 6), wantSkipped: 6},
		// The other scheduler's replicas are the first candidates: passed over.
		{name: "a mixed workload moves Ballast's replicas",
			pods:        append(othersOf("web", "node-a", 3), prioritized(replicaPods("web", "node-a", 3))...),
			wantBallast: 3, wantSkipped: 3},
		// 3 vs 2, a difference of one: nothing moves. Counting only
		// Ballast's replicas would make it 3 vs 0. node-b's two, looked at
		// as a source, are passed over.
		{name: "replicas of another scheduler count on their node",
			pods:        append(replicaPods("web", "node-a", 3), othersOf("web", "node-b", 2)...),
			wantSkipped: 2},
		{name: "replaceDefault mode lists default-scheduler",
			schedulerNames: []string{"ballast-scheduler", "default-scheduler"},
			pods:           othersOf("web", "node-a", 6), wantOther: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edit := func(a *SpreadReplicasArgs) {
				if tc.schedulerNames != nil {
					a.SchedulerNames = tc.schedulerNames
				}
			}
			h := newHarness(t, args(edit), twoNodes, tc.pods...)
			var ballast, other int
			for _, name := range h.cycle(quiet) {
				if strings.HasPrefix(name, "web-other-") {
					other++
				} else {
					ballast++
				}
			}
			if ballast != tc.wantBallast || other != tc.wantOther {
				t.Errorf("evicted %d replicas of ballast-scheduler and %d of default-scheduler, want %d and %d",
					ballast, other, tc.wantBallast, tc.wantOther)
			}
			if got := h.Counter(h.metrics.SkippedCandidates, PluginName, balance.SkipOtherScheduler); got != tc.wantSkipped {
				t.Errorf("skipped{reason=other-scheduler} = %v, want %v", got, tc.wantSkipped)
			}
		})
	}
}

// A replacement that lands back on its source is counted as ping-pong, and
// the workload is not moved off that node again within the cooldown.
func TestStopsAfterAReplacementLandsBack(t *testing.T) {
	h := newHarness(t, args(func(a *SpreadReplicasArgs) { a.MaxEvictionsPerNode = ptrTo(int32(1)) }),
		twoNodes, replicaPods("web", "node-a", 6)...)
	if got := h.cycle(quiet); len(got) != 1 {
		t.Fatalf("first cycle evicted %v, want one pod", got)
	}
	// The scheduler put the replacement back on node-a: 6 vs 0 again.
	h.add(replica("web-back", "node-a", "web"))
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v again from the node its replacement landed back on", got)
	}
	if v := h.Counter(h.metrics.PingPong, PluginName, "node-a"); v != 1 {
		t.Errorf("ping-pong = %v, want 1", v)
	}
	// Once the cooldown is over, the node may be tried again.
	h.clock.Step(10 * time.Minute)
	if got := h.cycle(quiet); len(got) != 1 {
		t.Errorf("after the cooldown evicted %v, want one pod", got)
	}
}

// A workload LoadAwareBalance moved off node-b is not sent back there.
func TestDoesNotUndoAnotherPluginsMove(t *testing.T) {
	h := newHarness(t, args(nil), twoNodes, replicaPods("web", "node-a", 6)...)
	web := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	h.store.Lock()
	h.store.Remember(web, "", "node-b", "node-a", h.clock.Now().Add(-time.Minute), balance.NodeLoad{}, balance.NodeLoad{})
	h.store.Unlock()
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v towards a node the workload was just moved off", got)
	}
}

// Spreading is balancing: a node that received a moved pod of the workload
// is not a source for it within balanceCooldown, long after evictionCooldown.
func TestDoesNotUndoAMoveWithinTheBalanceCooldown(t *testing.T) {
	nodes := []*v1.Node{node("node-a"), node("node-b"), node("node-c")}
	h := newHarness(t, args(nil), nodes, replicaPods("web", "node-a", 6)...)
	web := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	h.store.Lock()
	h.store.Remember(web, "", "node-c", "node-a", h.clock.Now().Add(-20*time.Minute), balance.NodeLoad{}, balance.NodeLoad{})
	h.store.Unlock()
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v from node-a, which received a moved pod of web 20 minutes ago", got)
	}
	h.clock.Step(time.Hour)
	if got := h.cycle(quiet); len(got) == 0 {
		t.Error("evicted nothing once balanceCooldown is over")
	}
}

// With three nodes the one with the fewest replicas takes the pod, even
// when another is less loaded.
func TestPrefersTheNodeWithFewestReplicas(t *testing.T) {
	nodes := []*v1.Node{node("node-a"), node("node-b"), node("node-c")}
	pods := append(replicaPods("web", "node-a", 5), replicaPods("web", "node-b", 2)...)
	h := newHarness(t, args(func(a *SpreadReplicasArgs) { a.MaxEvictionsPerNode = ptrTo(int32(1)) }), nodes, pods...)
	now := h.clock.Now()
	h.cycle(loads("node-a", 20, 30, "node-b", 5, 10, "node-c", 5, 20))
	// 5/2/0 → 4/2/1: node-a reached its limit and 2 − 1 leaves node-b alone.
	if len(h.Evicted) != 1 || !allFrom("node-a", h.Evicted) {
		t.Fatalf("evicted %v, want one pod from node-a", h.Evicted)
	}
	h.store.Lock()
	defer h.store.Unlock()
	// The pod's 4 % of memory is expected on node-c, not on node-b.
	if got := h.store.InFlight("node-c", now, time.Minute, nil)[usage.Memory]; got != 4 {
		t.Errorf("memory expected on node-c = %v %%, want 4", got)
	}
	if got := h.store.InFlight("node-b", now, time.Minute, nil)[usage.Memory]; got != 0 {
		t.Errorf("memory expected on node-b = %v %%, want 0", got)
	}
}

func allFrom(nodeName string, pods []string) bool {
	for _, p := range pods {
		if !strings.HasPrefix(p, "web-"+nodeName+"-") {
			return false
		}
	}
	return true
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		args runtime.Object
		deps balance.Deps
	}{
		{name: "wrong args type", args: &v1.Pod{}, deps: balance.Deps{Usage: &staticSource{}, Model: balance.SchedulerModel{}}},
		{name: "invalid args", args: &SpreadReplicasArgs{HighThresholds: balance.ResourceThresholds{usage.CPU: 120}}, deps: balance.Deps{Usage: &staticSource{}, Model: balance.SchedulerModel{}}},
		{name: "no usage source", args: &SpreadReplicasArgs{}, deps: balance.Deps{Model: balance.SchedulerModel{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(context.Background(), tc.args, nil, tc.deps); err == nil {
				t.Fatal("New succeeded")
			}
		})
	}
}

// Spreading moves a workload a quarter of its replicas' times per
// balanceCooldown, once for six: a workload moved off another node within
// it stays where it is, and spreads once it is over.
func TestMovesAWorkloadOncePerBalanceCooldown(t *testing.T) {
	nodes := []*v1.Node{node("node-a"), node("node-b"), node("node-c")}
	h := newHarness(t, args(nil), nodes, replicaPods("web", "node-a", 6)...)
	web := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	h.store.Lock()
	h.store.Remember(web, "", "node-c", "node-a", h.clock.Now().Add(-time.Minute), balance.NodeLoad{}, balance.NodeLoad{})
	h.store.Unlock()
	quiet3 := loads("node-a", 20, 30, "node-b", 5, 10, "node-c", 5, 10)
	if got := h.cycle(quiet3); len(got) != 0 {
		t.Fatalf("evicted %v within balanceCooldown of the workload's last move", got)
	}
	h.clock.Step(time.Hour)
	if got := h.cycle(quiet3); len(got) == 0 {
		t.Error("evicted nothing once balanceCooldown was over")
	}
}

// Replicas their volumes keep on their node are never spread: a
// StatefulSet's pods with local volumes on node-a stay, and are counted as
// skipped (pinned).
func TestLeavesReplicasTheirVolumesPin(t *testing.T) {
	var objs []runtime.Object
	var pods []*v1.Pod
	for i := range 6 {
		claim := fmt.Sprintf("data-web-%d", i)
		objs = append(objs,
			&v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: claim, Namespace: "default"}, Spec: v1.PersistentVolumeClaimSpec{VolumeName: "pv-" + claim}},
			&v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + claim}, Spec: v1.PersistentVolumeSpec{
				PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + claim}},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{"node-a"}}}}}}}}})
		p := replica(fmt.Sprintf("web-%d", i), "node-a", "web")
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
		pods = append(pods, p)
	}
	h := newHarnessWith(t, args(nil), twoNodes, objs, pods...)
	if got := h.cycle(quiet); len(got) != 0 {
		t.Fatalf("evicted %v, replicas their volumes keep on node-a", got)
	}
	if v := h.Counter(h.metrics.SkippedCandidates, PluginName, balance.SkipPinned); v != 6 {
		t.Errorf("pinned skips = %v, want 6", v)
	}
}
