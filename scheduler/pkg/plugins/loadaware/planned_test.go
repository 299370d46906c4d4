package loadaware

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/scheduler/pkg/apis/config"
	"github.com/ballast-sched/ballast/scheduler/pkg/plugins/plugintest"
)

// plannedStats: a is the coolest node, b the descheduler's choice, hot a
// node whose memory filled since the move (88 + 3.125 > 90).
var plannedStats = map[string]plugintest.NodeStats{
	"a":   {CPU: 30, Memory: 40},
	"b":   {CPU: 40, Memory: 50},
	"hot": {CPU: 30, Memory: 88},
}

// deploymentPod is a pod of the Deployment called workload, as its
// ReplicaSet creates it.
func deploymentPod(name, workload string) *v1.Pod {
	pod := plugintest.Pod(name, "", "200m", "256Mi")
	yes := true
	pod.Labels = map[string]string{"pod-template-hash": "5d8f7c"}
	pod.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: workload + "-5d8f7c", Controller: &yes}}
	return pod
}

// setupPlanned runs LoadAware reading the moves ConfigMap, which holds saved,
// and waits until the plugin has read it.
func setupPlanned(t *testing.T, saved []moves.Saved) (*plugintest.Framework, *LoadAware) {
	t.Helper()
	args := &config.LoadAwareArgs{PlannedMoves: &config.PlannedMoves{Namespace: "ballast", Name: "ballast-descheduler-moves"}}
	fw, _, pl := setupPlugin(t, args, plannedStats, "a", "b", "hot")
	data, err := moves.Encode(saved)
	if err != nil {
		t.Fatal(err)
	}
	cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ballast", Name: "ballast-descheduler-moves"},
		Data: map[string]string{moves.Key: string(data)}}
	ctx := context.Background()
	if _, err := fw.Client.CoreV1().ConfigMaps("ballast").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The informer starts with the first pod scored.
	pl.planned.nodes(plugintest.Pod("first", "", "", ""))
	err = wait.PollUntilContextTimeout(ctx, time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return pl.planned.plans.Load() != nil, nil
	})
	if err != nil {
		t.Fatalf("the plugin never read the moves: %v", err)
	}
	return fw, pl
}

// A new pod of a workload the descheduler moved scores the node the move
// planned highest while the plan holds and the node's usage still takes
// it; other pods, and pods once the plan has gone, score as without it.
func TestPlannedMoveFavoursItsDestination(t *testing.T) {
	now := time.Now()
	web := moves.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	move := func(to string, ago time.Duration) moves.Saved {
		return moves.Saved{Workload: web, Pod: "web-old", Source: "a", Destination: to, At: now.Add(-ago)}
	}
	fw, _ := setupPlanned(t, nil)
	baseline := fw.Scores(t, framework.NewCycleState(), deploymentPod("web-new", "web"))
	if baseline["a"] <= baseline["b"] {
		t.Fatalf("baseline scores %v: the test wants a to beat b on usage alone", baseline)
	}
	tests := []struct {
		name  string
		saved []moves.Saved
		pod   *v1.Pod
		// favoured is the node scored highest for the plan; empty: every
		// node scores as without plans.
		favoured string
	}{
		{name: "planned on b", saved: []moves.Saved{move("b", time.Minute)}, pod: deploymentPod("web-new", "web"), favoured: "b"},
		// 88 + 3.125 = 91.1 > 90: the node no longer takes the pod.
		{name: "planned on a node that got hot", saved: []moves.Saved{move("hot", time.Minute)}, pod: deploymentPod("web-new", "web")},
		// 6m ago, validFor defaults to 5m.
		{name: "expired", saved: []moves.Saved{move("b", 6*time.Minute)}, pod: deploymentPod("web-new", "web")},
		{name: "another workload", saved: []moves.Saved{move("b", time.Minute)}, pod: deploymentPod("api-new", "api")},
		{name: "a pod without a workload", saved: []moves.Saved{move("b", time.Minute)}, pod: plugintest.Pod("bare", "", "200m", "256Mi")},
		{name: "replacement already running", saved: []moves.Saved{func() moves.Saved {
			m := move("b", time.Minute)
			m.LandedOn = "a"
			return m
		}()}, pod: deploymentPod("web-new", "web")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fw, _ := setupPlanned(t, tc.saved)
			want := maps.Clone(baseline)
			if tc.favoured != "" {
				want[tc.favoured] = 100
			}
			if diff := cmp.Diff(want, fw.Scores(t, framework.NewCycleState(), tc.pod)); diff != "" {
				t.Errorf("scores (-want,+got):\n%s", diff)
			}
		})
	}
}

// A move has one replacement: once a pod of the workload is reserved on
// the planned node, the workload's next pod is placed as any other, until
// that placement is abandoned. Two moves to two nodes plan one pod each.
func TestPlannedMoveTakesOneReplacement(t *testing.T) {
	now := time.Now()
	web := moves.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	fw, _ := setupPlanned(t, []moves.Saved{
		{Workload: web, Pod: "web-1", Source: "hot", Destination: "b", At: now.Add(-2 * time.Minute)},
		{Workload: web, Pod: "web-2", Source: "hot", Destination: "a", At: now.Add(-time.Minute)},
	})
	ctx := context.Background()
	first, second, third := deploymentPod("web-x", "web"), deploymentPod("web-y", "web"), deploymentPod("web-z", "web")
	state := framework.NewCycleState()
	if got := fw.Scores(t, state, first); got["a"] != 100 || got["b"] != 100 {
		t.Fatalf("first pod's scores %v, want a and b planned (100)", got)
	}
	if st := fw.RunReservePluginsReserve(ctx, state, first, "b"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	state2 := framework.NewCycleState()
	if got := fw.Scores(t, state2, second); got["a"] != 100 || got["b"] == 100 {
		t.Errorf("second pod's scores %v, want only a planned", got)
	}
	if st := fw.RunReservePluginsReserve(ctx, state2, second, "a"); !st.IsSuccess() {
		t.Fatalf("Reserve: %v", st)
	}
	if got := fw.Scores(t, framework.NewCycleState(), third); got["a"] == 100 || got["b"] == 100 {
		t.Errorf("third pod's scores %v, want no plan left", got)
	}
	fw.RunReservePluginsUnreserve(ctx, state, first, "b")
	if got := fw.Scores(t, framework.NewCycleState(), third); got["b"] != 100 {
		t.Errorf("scores %v after the first placement was abandoned, want b planned again", got)
	}
}

// A planned move's replacement is scored on its own: kube-scheduler must
// not reuse another pod's result for it (opportunistic batching), while
// other pods stay batched.
func TestPlannedMoveReplacementIsNotBatched(t *testing.T) {
	web := moves.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	fw, _ := setupPlanned(t, []moves.Saved{{Workload: web, Pod: types.UID("web-1"), Source: "a", Destination: "b", At: time.Now()}})
	if sig := fw.SignPod(context.Background(), deploymentPod("web-new", "web")); sig != nil {
		t.Errorf("the replacement was signed %q; want no signature", sig)
	}
	fw.Signature(t, deploymentPod("api-new", "api"))
}
