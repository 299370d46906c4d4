package integration

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
)

// balancePolicy enables LoadAwareBalance alone, on the test window, with
// extra args (YAML lines at args indentation).
func balancePolicy(extra ...string) string {
	return `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: ballast
    pluginConfig:
      - name: DefaultEvictor
        args:
          nodeFit: true
          noEvictionPolicy: Mandatory
      - name: LoadAwareBalance
        args:
          window: 2s
` + strings.Join(extra, "\n") + `
    plugins:
      balance:
        enabled: [LoadAwareBalance]
`
}

// hotSpot builds the documented hot spot: ten movable pods (five workloads
// of two replicas, 400 MiB each, 48.8 % of 8 GiB together) on a node whose
// memory is at 95 %, and two cool nodes at 20 %.
func hotSpot(t *testing.T, coolMemory float64, edit ...func(*appsv1.ReplicaSet)) *env {
	e := newEnv(t, nodeSpec("hot", false), nodeSpec("cool-a", true), nodeSpec("cool-b", true))
	e.base["hot"] = [2]float64{10, 95 - 10*400.0/8192*100}
	e.base["cool-a"] = [2]float64{10, coolMemory}
	e.base["cool-b"] = [2]float64{10, coolMemory}
	for _, name := range []string{"alpha", "bravo", "charlie", "delta", "echo"} {
		e.replicaSet(name, 2, 400, edit...)
	}
	if got := e.podsPerNode()["hot"]; got != 10 {
		t.Fatalf("%d pods on the hot node, want 10: %v", got, e.podNames())
	}
	e.setUnschedulable("cool-a", false)
	e.setUnschedulable("cool-b", false)
	return e
}

func memoryOf(e *env, node string) float64 { return e.nodeUsage()[node][1] }

func TestHotSpotMovesToCoolNodesWithoutPingPong(t *testing.T) {
	e := hotSpot(t, 20)
	policy := e.writePolicy(balancePolicy("          consecutiveHotCycles: 3"))
	// consecutiveHotCycles is 3: two cycles of a hot node evict nothing.
	for i := 1; i <= 2; i++ {
		e.cycle(policy, false)
		if n := e.evictions("hot-memory", "hot"); n != 0 {
			t.Fatalf("cycle %d evicted %v pods before the hysteresis", i, n)
		}
	}
	cycles := 0
	for ; cycles < 3 && memoryOf(e, "hot") >= 85; cycles++ {
		e.cycle(policy, false)
	}
	if m := memoryOf(e, "hot"); m >= 85 {
		t.Fatalf("after 3 hot cycles the hot node is at %.1f%% memory; pods %v", m, e.podNames())
	}
	moved := e.evictions("hot-memory", "hot")
	t.Logf("hot node under its high threshold after %d cycles beyond hysteresis, %v pods moved", cycles, moved)
	perNode := e.podsPerNode()
	if float64(perNode["cool-a"]+perNode["cool-b"]) != moved || perNode["hot"] != 10-int(moved) {
		t.Errorf("pods per node %v after %v evictions, want the moved ones on the cool nodes", perNode, moved)
	}
	e.checkEvictionEvents(int(moved))
	for i := 0; i < 10; i++ {
		e.cycle(policy, false)
	}
	if n := e.evictions("hot-memory", "hot"); n != moved {
		t.Errorf("%v more evictions in 10 further cycles", n-moved)
	}
	for _, node := range []string{"cool-a", "cool-b"} {
		if n := e.evictions("hot-memory", node); n != 0 {
			t.Errorf("%v pods evicted from %s back", n, node)
		}
	}
	if n := e.counter(e.metrics.PingPong, loadawarebalance.PluginName, "hot"); n != 0 {
		t.Errorf("ping-pong on the hot node: %v", n)
	}
	if m := memoryOf(e, "hot"); m >= 85 {
		t.Errorf("the hot node is back at %.1f%% memory", m)
	}
}

// checkEvictionEvents checks the eviction events the API server received:
// each names the hot resource and the expected destination. The harness
// runs each cycle with its own event broadcaster, which stops when the cycle
// ends and may drop the newest events, so only their form is checked here;
// the unit tests check that every eviction records one.
func (e *env) checkEvictionEvents(moved int) {
	e.t.Helper()
	evs, err := e.c.Client.EventsV1().Events(namespace).List(e.ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var got []string
	for _, ev := range evs.Items {
		if ev.ReportingController != "sigs.k8s.io/descheduler" && !strings.Contains(ev.Note, "descheduler") {
			continue
		}
		got = append(got, ev.Regarding.Name+": "+ev.Reason)
		if !strings.Contains(ev.Reason, "memory") || !strings.Contains(ev.Reason, "expected destination cool-") {
			e.t.Errorf("eviction event of %s has reason %q, want why and where", ev.Regarding.Name, ev.Reason)
		}
	}
	if len(got) > moved {
		e.t.Errorf("%d eviction events for %d evictions: %q", len(got), moved, got)
	}
	e.t.Logf("eviction events: %q", got)
}

func TestPDBWithMaxUnavailableZeroBlocksEvictions(t *testing.T) {
	tier := func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Labels["tier"] = "web" }
	e := hotSpot(t, 20, tier)
	zero := intstr.FromInt32(0)
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: namespace},
		Spec: policyv1.PodDisruptionBudgetSpec{MaxUnavailable: &zero,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "web"}}},
	}
	if _, err := e.c.Client.PolicyV1().PodDisruptionBudgets(namespace).Create(e.ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		p, err := e.c.Client.PolicyV1().PodDisruptionBudgets(namespace).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && p.Status.ObservedGeneration == p.Generation && p.Status.ExpectedPods == 10, err
	})
	if err != nil {
		t.Fatalf("the disruption controller never processed the PDB: %v", err)
	}
	policy := e.writePolicy(balancePolicy())
	for i := 0; i < 5; i++ {
		e.cycle(policy, false)
	}
	if got := e.podsPerNode()["hot"]; got != 10 {
		t.Errorf("%d pods left on the hot node despite maxUnavailable 0", got)
	}
	if n := e.evictions("hot-memory", "hot"); n != 0 {
		t.Errorf("%v evictions counted", n)
	}
	if n := e.skipped("pdb"); n < 1 {
		t.Errorf("skipped{reason=pdb} = %v, want refusals recorded", n)
	}
}

func TestStaleUsageEvictsNothing(t *testing.T) {
	e := hotSpot(t, 20)
	// Two fresh cycles build a streak without evicting; then usage goes stale.
	policy := e.writePolicy(balancePolicy("          consecutiveHotCycles: 3"))
	e.cycle(policy, false)
	e.cycle(policy, false)
	// load-watcher loses its source: usage goes stale after 1s.
	e.provider.SetError(errors.New("metrics source unavailable"))
	err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		snap := e.lw.Snapshot()
		for name := range e.base {
			if _, fresh := snap.Node(name); fresh {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("usage never went stale: %v", err)
	}
	for i := 0; i < 4; i++ {
		e.run(policy, false)
	}
	if got := e.podsPerNode()["hot"]; got != 10 {
		t.Errorf("%d pods left on the hot node with stale usage", got)
	}
	if n := e.skipped("stale"); n < 4*3 {
		t.Errorf("skipped{reason=stale} = %v, want every node in every cycle", n)
	}
}

func TestDryRunOnlyLogs(t *testing.T) {
	e := hotSpot(t, 20)
	policy := e.writePolicy(balancePolicy("          dryRun: true"))
	for i := 0; i < 5; i++ {
		e.cycle(policy, false)
	}
	if got := e.podsPerNode()["hot"]; got != 10 {
		t.Errorf("%d pods left on the hot node in dry run", got)
	}
	if n := e.evictions("hot-memory", "hot"); n != 0 {
		t.Errorf("%v evictions counted in dry run", n)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "Would evict pod (dry run)") {
		t.Errorf("no dry-run log line; logs:\n%s", tail(logs, 3000))
	}
}

func TestNoDestinationEvictsNothing(t *testing.T) {
	// The other nodes are warm: at 82 % memory a 400 MiB pod (4.9 %) would
	// take either over the 85 % high threshold.
	e := hotSpot(t, 82)
	policy := e.writePolicy(balancePolicy())
	for i := 0; i < 5; i++ {
		e.cycle(policy, false)
	}
	if got := e.podsPerNode()["hot"]; got != 10 {
		t.Errorf("%d pods left on the hot node without a destination", got)
	}
	if n := e.skipped("no-destination"); n < 1 {
		t.Errorf("skipped{reason=no-destination} = %v, want the reason recorded", n)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// The descheduler's own --dry-run evicts nothing either: evictions go to a
// sandbox copy of the cluster. Run the way production runs, looping every
// second in one process, which also shows the plugin keeping its hot streaks
// on its instance.
func TestDeschedulerDryRunEvictsNothing(t *testing.T) {
	e := hotSpot(t, 20)
	policy := e.writePolicy(balancePolicy())
	e.publishUsage()
	e.waitUsageSettled()
	e.runFor(policy, true, time.Second, 8*time.Second)
	if got := e.podsPerNode()["hot"]; got != 10 {
		t.Errorf("%d pods left on the hot node with --dry-run", got)
	}
	if logs := e.logs.String(); !strings.Contains(logs, `"Evicted pod"`) {
		t.Errorf("the plugin never decided to evict, so the dry run proved nothing; logs:\n%s", tail(logs, 3000))
	}
}

// A new leader, or a restarted descheduler, starts from the moves its
// predecessor kept in the cluster and undoes none of them: the pod moved
// onto cool-a stays there when cool-a turns hot with it within
// evictionCooldown, its own use up by less than the pod brought (a move
// overtaken by a heat of its own would be free to go). A descheduler that
// forgot (no ConfigMap) moves it off again, which shows the check can fail.
func TestANewLeaderUndoesNothing(t *testing.T) {
	for _, kept := range []bool{true, false} {
		t.Run(fmt.Sprintf("moves kept in the cluster: %v", kept), func(t *testing.T) {
			// cool-a at 80 % takes one 400 MiB pod (4.9 %) under the high
			// 85 %; cool-b is cordoned, so that it is the only destination.
			e := hotSpot(t, 80)
			e.setUnschedulable("cool-b", true)
			if kept {
				cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ballast-descheduler-moves", Namespace: namespace}}
				if _, err := e.c.Client.CoreV1().ConfigMaps(namespace).Create(e.ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				e.persist = balance.NewMovesConfigMap(e.c.Client, namespace, cm.Name)
			}
			policy := e.writePolicy(balancePolicy())
			e.cycle(policy, false)
			moved := e.podsPerNode()["cool-a"]
			if moved == 0 {
				t.Fatalf("nothing moved to cool-a: %v", e.podsPerNode())
			}
			// The leader dies with its memory. cool-a's own use climbs two
			// points, which takes it over 85 % with the moved pod (82 +
			// 4.9); the hot node has cooled, and cool-b, empty now, takes
			// pods again: a cool destination for the pod.
			e.store = balance.NewStore()
			e.base["cool-a"] = [2]float64{10, 82}
			e.base["hot"] = [2]float64{10, 30}
			e.base["cool-b"] = [2]float64{10, 10}
			e.setUnschedulable("cool-b", false)
			e.cycle(policy, false)
			undone := e.evictions("hot-memory", "cool-a")
			switch {
			case kept && undone != 0:
				t.Errorf("the new leader moved %v pods off cool-a, where its predecessor had just moved them", undone)
			case !kept && undone == 0:
				t.Errorf("without kept moves the new leader left cool-a alone too: the test shows nothing")
			}
			if kept && !strings.Contains(e.logs.String(), "Recalled moves kept in the cluster") {
				t.Errorf("no log line of the recalled moves:\n%s", tail(e.logs.String(), 3000))
			}
		})
	}
}
