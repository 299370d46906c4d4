package loadawarebalance

import (
	"fmt"
	"k8s.io/apimachinery/pkg/types"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-base/metrics/testutil"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
)

// planArgs balance memory: no eviction limit gets in a plan's way.
func planArgs(a *LoadAwareBalanceArgs) {
	unlimited(a)
	a.DeviationThresholds = balance.ResourceThresholds{usage.Memory: 10}
}

// webOn is n pods of the workload web (100 MiB, 10 % of a node) on node,
// named from first.
func webOn(node string, first, n int) []*v1.Pod {
	var pods []*v1.Pod
	for i := first; i < first+n; i++ {
		pods = append(pods, pod(fmt.Sprintf("web-%d", i), node, "web", 100))
	}
	return pods
}

// The six web pods sit on a (memory 60 %), b and c at 20 % hold nothing of
// it: the best placement leaves a at 40 % and b and c at 30 % (spread 10),
// two moves away. The plan is made once and kept: one move per cycle (a
// quarter of six replicas, as a rolling update restarts them), each note
// naming its plan, until the cluster is within the margin of the best.
func TestPlanMovesTowardsTheBestPlacementOverCycles(t *testing.T) {
	h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), webOn("a", 1, 6)...)
	h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
	if len(h.Evicted) != 1 {
		t.Fatalf("first cycle evicted %v, want one pod of web", h.Evicted)
	}
	plan := h.plugin.Deps.Store.Plan()
	if plan == nil {
		t.Fatal("no plan kept")
	}
	if plan.Spread < 39 || plan.Best > 10.5 || plan.Done != 1 || len(plan.Moves) != 1 {
		t.Fatalf("plan %+v: want spread 40, best 10, one move made and one left", plan)
	}
	for placement, want := range map[string]float64{"current": 40, "best": 10} {
		got, err := testutil.GetGaugeMetricValue(h.metrics.Spread.WithLabelValues(PluginName, placement))
		if err != nil || got < want-0.5 || got > want+0.5 {
			t.Errorf("utilisation_spread_points{placement=%s} = %v (%v), want %v", placement, got, err, want)
		}
	}
	first := h.plugin.Deps.Store.Destinations()[0]
	events := strings.Join(h.RecordedEvents(), "\n")
	if want := "move 1 of 2 of plan " + plan.ID; !strings.Contains(events, want) {
		t.Errorf("events %s lack %q", events, want)
	}
	// The replacement lands where the plan said; the next cycle makes the
	// plan's second move, to the other node.
	h.Add(pod("web-7", first, "web", 100, func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(h.clock.Now()) }))
	h.clock.Step(5 * time.Minute)
	usage2 := loads("a", 10, 50, "b", 10, 20, "c", 10, 20)
	usage2[first] = balance.NodeLoad{usage.CPU: 10, usage.Memory: 30}
	h.cycle(usage2)
	if len(h.Evicted) != 2 {
		t.Fatalf("second cycle: evicted %v, want a second pod of web", h.Evicted)
	}
	if got := h.plugin.Deps.Store.Plan(); got.ID != plan.ID || got.Done != 2 || got.Finished.IsZero() {
		t.Errorf("plan after the second cycle %+v, want plan %s finished with two moves", got, plan.ID)
	}
	dests := h.plugin.Deps.Store.Destinations()
	if dests[1] == first || dests[1] == "a" {
		t.Errorf("moves went to %v, want one to each of b and c", dests)
	}
	if !strings.Contains(strings.Join(h.RecordedEvents(), "\n"), "move 2 of 2 of plan "+plan.ID) {
		t.Errorf("events %v lack the plan's second move", h.RecordedEvents())
	}
	// Balanced: nothing moves, however many cycles run.
	h.Add(pod("web-8", dests[1], "web", 100, func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(h.clock.Now()) }))
	for range 3 {
		h.clock.Step(5 * time.Minute)
		h.cycle(loads("a", 10, 40, "b", 10, 30, "c", 10, 30))
	}
	if len(h.Evicted) != 2 {
		t.Errorf("a balanced cluster lost %v", h.Evicted[2:])
	}
}

func nodesNamed(names ...string) []*v1.Node {
	var out []*v1.Node
	for _, n := range names {
		out = append(out, node(n))
	}
	return out
}

// A cluster within the margin of its best placement is left alone, even
// when nodes are ten points apart; without deviationThresholds nothing is
// planned at all.
func TestPlanLeavesAClusterWithinTheMargin(t *testing.T) {
	pods := append(webOn("a", 1, 4), append(webOn("b", 5, 1), webOn("c", 6, 1)...)...)
	h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), pods...)
	h.cycle(loads("a", 10, 40, "b", 10, 30, "c", 10, 30))
	if len(h.Evicted) != 0 {
		t.Errorf("evicted %v from a cluster at its best placement", h.Evicted)
	}
	h = newHarness(t, args(unlimited), nodesNamed("a", "b", "c"), webOn("a", 1, 6)...)
	h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
	if len(h.Evicted) != 0 || h.plugin.Deps.Store.Plan() != nil {
		t.Errorf("without deviationThresholds: evicted %v, plan %+v", h.Evicted, h.plugin.Deps.Store.Plan())
	}
}

// planMargin is the user's: the cluster of TestPlanMovesTowardsTheBest-
// PlacementOverCycles, 40 points of spread where 10 are possible, is left
// alone with a margin of 35 and planned with one of 25.
func TestPlanMarginIsTheArgs(t *testing.T) {
	for _, tc := range []struct {
		margin float64
		moves  bool
	}{{35, false}, {25, true}} {
		h := newHarness(t, args(func(a *LoadAwareBalanceArgs) {
			planArgs(a)
			a.PlanMargin = ptrTo(tc.margin)
		}), nodesNamed("a", "b", "c"), webOn("a", 1, 6)...)
		h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
		if moved := len(h.Evicted) > 0; moved != tc.moves {
			t.Errorf("planMargin %v: evicted %v, want moves %v", tc.margin, h.Evicted, tc.moves)
		}
	}
}

// What the plan may not move stays where it is: pods of a workload moved
// onto the node within balanceCooldown (moving them again would be a
// loop), the only pod of its workload (evicting it leaves the workload
// down), and pods a cordoned destination cannot take.
func TestPlanMovesOnlyWhatMayMove(t *testing.T) {
	t.Run("moved onto the node within balanceCooldown", func(t *testing.T) {
		h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), webOn("a", 1, 6)...)
		wl, _ := balance.WorkloadOf(webOn("a", 1, 1)[0])
		h.plugin.Deps.Store.Remember(wl, "uid-web-0", "b", "a", h.clock.Now().Add(-10*time.Minute), nil, nil)
		h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v, pods of a workload moved onto a ten minutes ago", h.Evicted)
		}
	})
	t.Run("moved onto the node before the nodes changed", func(t *testing.T) {
		// The same move holds the pods while the nodes stay as they were;
		// once d joins, it was made for another cluster, and the plan for
		// this one moves web's pods off a again, though not back to b.
		h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), webOn("a", 1, 6)...)
		wl, _ := balance.WorkloadOf(webOn("a", 1, 1)[0])
		h.plugin.Deps.Store.Remember(wl, "uid-web-0", "b", "a", h.clock.Now().Add(-10*time.Minute), nil, nil)
		h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
		if len(h.Evicted) != 0 {
			t.Fatalf("evicted %v, pods of a workload moved onto a ten minutes ago", h.Evicted)
		}
		h.nodes = append(h.nodes, node("d"))
		if _, err := h.Client.CoreV1().Nodes().Create(h.ctx, node("d"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.clock.Step(5 * time.Minute)
		h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20, "d", 10, 0))
		if len(h.Evicted) == 0 {
			t.Fatal("after d joined, the plan still held web's pods on a for a move made before")
		}
		for _, dest := range h.plugin.Deps.Store.Destinations()[1:] {
			if dest == "b" {
				t.Errorf("a pod of web was sent back to b, which a move took it off ten minutes before: %v", h.plugin.Deps.Store.Destinations())
			}
		}
	})
	t.Run("the replacement of a move, until the nodes change", func(t *testing.T) {
		// web-7 replaces a move of web from c onto a: it stays while the
		// nodes stay as they were, and may move on once d joins. The four
		// single-replica pods on a move not at all: web-7 is the only pod
		// that can cool a.
		var pods []*v1.Pod
		for i := range 4 {
			pods = append(pods, pod(fmt.Sprintf("solo-%d", i), "a", fmt.Sprintf("rs-solo-%d", i), 100))
		}
		pods = append(pods, webOn("b", 1, 1)...)
		h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), pods...)
		h.cycle(loads("a", 10, 40, "b", 10, 10, "c", 10, 10))
		if len(h.Evicted) != 0 {
			t.Fatalf("evicted %v, nothing may move yet", h.Evicted)
		}
		wl, _ := balance.WorkloadOf(webOn("a", 1, 1)[0])
		h.plugin.Deps.Store.Remember(wl, "uid-web-0", "c", "a", h.clock.Now().Add(-time.Minute), nil, nil)
		h.Add(webOn("a", 7, 1)[0])
		h.cycle(loads("a", 10, 50, "b", 10, 10, "c", 10, 10))
		if len(h.Evicted) != 0 {
			t.Fatalf("evicted %v, the replacement of a move made a minute ago", h.Evicted)
		}
		h.nodes = append(h.nodes, node("d"))
		if _, err := h.Client.CoreV1().Nodes().Create(h.ctx, node("d"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.clock.Step(5 * time.Minute)
		h.cycle(loads("a", 10, 50, "b", 10, 10, "c", 10, 10, "d", 10, 0))
		if !slices.Equal(h.Evicted, []string{"web-7"}) {
			t.Fatalf("evicted %v after d joined, want web-7: a move made for another cluster holds nothing", h.Evicted)
		}
	})
	t.Run("the only pod of its workload", func(t *testing.T) {
		var pods []*v1.Pod
		for i := range 6 {
			pods = append(pods, pod(fmt.Sprintf("solo-%d", i), "a", fmt.Sprintf("rs-solo-%d", i), 100))
		}
		h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), pods...)
		h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v, single-replica workloads", h.Evicted)
		}
		if got := h.skipped(balance.SkipFiltered); got != 0 {
			t.Errorf("skipped{reason=filtered} = %v: the plan chose moves it could not make", got)
		}
	})
	t.Run("cordoned nodes take nothing", func(t *testing.T) {
		nodes := []*v1.Node{node("a"), node("b", cordon), node("c", cordon)}
		h := newHarness(t, args(planArgs), nodes, webOn("a", 1, 6)...)
		h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
		if len(h.Evicted) != 0 {
			t.Errorf("evicted %v towards cordoned nodes", h.Evicted)
		}
	})
}

// A plan is kept until the cluster changes: a node that joins ends it, and
// the next plan sends pods to the new node.
func TestPlanEndsWhenANodeJoins(t *testing.T) {
	nodes := nodesNamed("a", "b", "c")
	pods := append(webOn("a", 1, 8), webOn("b", 9, 4)...)
	h := newHarness(t, args(func(a *LoadAwareBalanceArgs) { planArgs(a); a.MaxEvictionsPerCycle = ptrTo(int32(1)) }), nodes, pods...)
	h.cycle(loads("a", 10, 80, "b", 10, 40, "c", 10, 0))
	first := h.plugin.Deps.Store.Plan()
	if first == nil || len(h.Evicted) != 1 || len(first.Moves) == 0 {
		t.Fatalf("evicted %v, plan %+v: want one move made and more left", h.Evicted, first)
	}
	h.Add(pod("web-13", h.plugin.Deps.Store.Destinations()[0], "web", 100, func(p *v1.Pod) { p.CreationTimestamp = metav1.NewTime(h.clock.Now()) }))
	h.nodes = append(h.nodes, node("d"))
	if _, err := h.Client.CoreV1().Nodes().Create(h.ctx, node("d"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(5 * time.Minute)
	h.cycle(loads("a", 10, 70, "b", 10, 40, "c", 10, 10, "d", 10, 0))
	second := h.plugin.Deps.Store.Plan()
	if second.ID == first.ID {
		t.Fatalf("plan %s kept after node d joined", first.ID)
	}
	if !strings.Contains(first.Ended, "node d joined") {
		t.Errorf("first plan ended %q, want the join named", first.Ended)
	}
	if !strings.Contains(fmt.Sprint(second.Target), "d") {
		t.Errorf("second plan's target %+v puts nothing on d", second.Target)
	}
}

func TestReplicaCap(t *testing.T) {
	for _, tc := range []struct {
		name               string
		replicas, eligible int
		share              float64
		want               int
	}{
		{"an even share and one more", 6, 3, 1.0 / 3, 3},
		{"a big node's share", 12, 3, 0.6, 8},
		{"never all where two nodes may hold them", 2, 2, 0.9, 1},
		{"one replica", 1, 3, 0.3, 2},
		{"one eligible node", 4, 1, 0.2, 5},
	} {
		if got := replicaCap(tc.replicas, tc.eligible, tc.share); got != tc.want {
			t.Errorf("%s: replicaCap(%d, %d, %g) = %d, want %d", tc.name, tc.replicas, tc.eligible, tc.share, got, tc.want)
		}
	}
}

// A new plan counts on what every pod uses: while pods of a scale or a
// rollout were first listed less than a window ago and the metrics API does
// not report them yet, their usage shows nowhere, and it waits. (Listed by
// the descheduler, not by their creation stamps: its clock and the API
// server's may differ.) Pods the metrics API reports hold nothing back:
// what the window does not show of them yet, their node's load counts from
// that report, so a cluster that scales every few minutes is still planned.
func TestPlanWaitsForNewPodsToShow(t *testing.T) {
	for _, measured := range []bool{false, true} {
		t.Run(fmt.Sprintf("measured=%v", measured), func(t *testing.T) {
			h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), pod("other", "b", "rs-other", 10))
			h.cycle(loads("a", 10, 20, "b", 10, 20, "c", 10, 20))
			for _, p := range webOn("a", 1, 6) {
				h.Add(p)
				if measured {
					h.podUsage[p.Name] = loadmodel.Amount{MilliCPU: 10, Memory: 100 * 1024 * 1024}
				}
			}
			h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
			if measured {
				if len(h.Evicted) != 1 || h.plugin.Deps.Store.Plan() == nil {
					t.Fatalf("evicted %v, plan %+v, a cycle after measured pods appeared: want the plan's first move", h.Evicted, h.plugin.Deps.Store.Plan())
				}
				return
			}
			if len(h.Evicted) != 0 || h.plugin.Deps.Store.Plan() != nil {
				t.Fatalf("evicted %v, plan %+v, a cycle after the pods appeared", h.Evicted, h.plugin.Deps.Store.Plan())
			}
			h.clock.Step(5 * time.Minute)
			h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
			if len(h.Evicted) != 1 {
				t.Errorf("evicted %v once the window shows the pods, want one move of the plan", h.Evicted)
			}
		})
	}
}

// Pods that balancing never moves — a DaemonSet's pod on a node that came
// back, a CronJob's run — hold no plan back while they are young: their
// node counts them by estimate, and waiting for them would stop planning
// after every reboot and for as long as CronJobs run. Each kind on its own
// must leave the plan free to start.
func TestPlanDoesNotWaitForPodsItNeverMoves(t *testing.T) {
	owned := func(kind, name string) func(*v1.Pod) {
		return func(p *v1.Pod) {
			p.OwnerReferences[0].Kind, p.OwnerReferences[0].Name, p.OwnerReferences[0].UID = kind, name, types.UID(kind+"-"+name)
			if kind == "DaemonSet" {
				p.OwnerReferences[0].APIVersion = "apps/v1"
			} else {
				p.OwnerReferences[0].APIVersion = "batch/v1"
				p.Spec.RestartPolicy = v1.RestartPolicyNever
			}
		}
	}
	for _, tc := range []struct {
		name string
		pod  *v1.Pod
	}{
		{"a DaemonSet's pod", pod("exporter-c", "c", "", 10, owned("DaemonSet", "exporter"))},
		{"a CronJob's run", pod("backup-1-x", "c", "", 10, owned("Job", "backup-1"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), webOn("a", 1, 6)...)
			// Even: nothing to plan; web's pods are known from here on.
			h.cycle(loads("a", 10, 60, "b", 10, 60, "c", 10, 60))
			if len(h.Evicted) != 0 {
				t.Fatalf("evicted %v from an even cluster", h.Evicted)
			}
			h.Add(tc.pod)
			h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
			if len(h.Evicted) != 1 || h.plugin.Deps.Store.Plan() == nil {
				t.Fatalf("evicted %v, plan %+v: want the plan's first move while %s is young", h.Evicted, h.plugin.Deps.Store.Plan(), tc.pod.Name)
			}
		})
	}
}

// A node whose memory, judged on its newest sample, rose and fell within
// the window by more than the deviation (a backup job outside Kubernetes)
// is left out of the plan: no pod moves off it or onto it for balance.
// CPU, judged on the window's average, is smoothed already.
func TestSwings(t *testing.T) {
	dev := balance.ResourceThresholds{usage.CPU: 10, usage.Memory: 10}
	node := func(cpuAvg, cpuMax, memAvg, memMax float64) usage.NodeUsage {
		return usage.NodeUsage{Windows: map[usage.Window]map[usage.Resource]usage.Stats{usage.Window5m: {
			usage.CPU: {Avg: cpuAvg, Max: cpuMax, Samples: 20}, usage.Memory: {Avg: memAvg, Max: memMax, Samples: 20}}}}
	}
	for _, tc := range []struct {
		name string
		nu   usage.NodeUsage
		want usage.Resource
	}{
		{"steady", node(30, 35, 40, 42), ""},
		{"a backup job", node(30, 35, 46, 81), usage.Memory},
		{"CPU noise or a wave", node(30, 60, 40, 42), ""},
	} {
		if got, _ := swings(tc.nu, usage.Window5m, dev, nil); got != tc.want {
			t.Errorf("%s: swings = %q, want %q", tc.name, got, tc.want)
		}
	}
	h := newHarness(t, args(planArgs), nodesNamed("a", "b", "c"), webOn("a", 1, 6)...)
	h.source.Peaks = map[string]balance.NodeLoad{"a": {usage.Memory: 95}}
	h.cycle(loads("a", 10, 60, "b", 10, 20, "c", 10, 20))
	if len(h.Evicted) != 0 {
		t.Errorf("evicted %v off a node whose memory swings", h.Evicted)
	}
}
