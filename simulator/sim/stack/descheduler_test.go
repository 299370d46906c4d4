package stack

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/descheduler/pkg/api"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/loadawarebalance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/model"
)

func TestPlacedByDefaultScheduler(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{name: "second mode gains default-scheduler", in: []string{"ballast-scheduler"},
			want: []string{"ballast-scheduler", "default-scheduler"}},
		{name: "replaceDefault mode is kept", in: []string{"ballast-scheduler", "default-scheduler"},
			want: []string{"ballast-scheduler", "default-scheduler"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lab := &loadawarebalance.LoadAwareBalanceArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: tc.in}}
			sr := &spreadreplicas.SpreadReplicasArgs{EvictionArgs: balance.EvictionArgs{SchedulerNames: tc.in}}
			in := append([]string(nil), tc.in...)
			placedByDefaultScheduler(&api.DeschedulerPolicy{Profiles: []api.DeschedulerProfile{{
				PluginConfigs: []api.PluginConfig{{Name: loadawarebalance.PluginName, Args: lab}, {Name: spreadreplicas.PluginName, Args: sr}},
			}}})
			if diff := cmp.Diff(tc.want, lab.SchedulerNames); diff != "" {
				t.Errorf("LoadAwareBalance schedulerNames (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, sr.SchedulerNames); diff != "" {
				t.Errorf("SpreadReplicas schedulerNames (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("the policy's list was changed in place (-want,+got):\n%s", diff)
			}
		})
	}
}

// lowNodeUtilizationScenario starts with every pod on node-1: node-2 is
// cordoned until the test uncordons it. Requests are tiny, so only
// measured usage can make node-1 look overutilised.
const lowNodeUtilizationScenario = `
name: low-node-utilization
duration: 10m
step: 15s
seed: 5
nodes:
- {name: node-1, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}}
- {name: node-2, cpu: "4", memory: 8Gi, background: {cpu: 200m, memory: 1Gi}, unschedulable: true}
workloads:
- name: api
  replicas: 4
  requests: {cpu: 50m, memory: 64Mi}
  usage:
    cpu: {type: constant, value: %s}
    memory: {type: constant, value: %s}
`

// TestPeerPolicyEvictsOnMeasuredUsage runs the peer's upstream
// LowNodeUtilization policy, metricsUtilization on, against the simulated
// metrics.k8s.io: it evicts from node-1 only when node-1's measured usage is
// above the target thresholds.
func TestPeerPolicyEvictsOnMeasuredUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; run without -short")
	}
	for _, tc := range []struct {
		name     string
		cpu, mem string
		evicted  bool
	}{
		// node-1: 200m + 4 × 800m = 3.4 of 4 CPU → 85 %; 1Gi + 4 × 1.5Gi = 7Gi
		// of 8Gi → 87.5 %: above the 50 % targets. node-2: 5 % CPU, 12.5 %
		// memory, no pods: below every 20 % threshold.
		{name: "measured over target", cpu: "800m", mem: "1536Mi", evicted: true},
		// node-1: 200m + 4 × 50m → 10 %; 1Gi + 4 × 64Mi → 15.6 %; 4 of 110
		// pods: both nodes underutilised, none over.
		{name: "measured under threshold", cpu: "50m", mem: "64Mi", evicted: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc, err := scenario.Parse(fmt.Appendf(nil, lowNodeUtilizationScenario, tc.cpu, tc.mem))
			if err != nil {
				t.Fatal(err)
			}
			ctx := t.Context()
			clock := model.NewClock(time.Now().Truncate(time.Second))
			s, err := Start(ctx, sc, Config{
				Scheduler: model.ModeDefault, Descheduler: true, DeschedulerPolicy: PeerDeschedulerPolicy,
				Clock: clock, Period: sc.Step.Duration,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.CreateWorkloads(ctx); err != nil {
				t.Fatal(err)
			}
			err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
				pods, err := s.c.Client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
				if err != nil || len(pods.Items) != 4 {
					return false, nil
				}
				for _, p := range pods.Items {
					if p.Spec.NodeName != "node-1" || p.Status.Phase != corev1.PodRunning {
						return false, nil
					}
				}
				return true, nil
			})
			if err != nil {
				t.Fatalf("the four pods never ran on node-1: %v", err)
			}
			if err := s.c.SetUnschedulable(ctx, "node-2", false); err != nil {
				t.Fatal(err)
			}
			clock.Set(s.start.Add(sc.Step.Duration))
			if err := s.PublishAndCollect(ctx, sc.Step.Duration, 1); err != nil {
				t.Fatal(err)
			}
			before, err := s.CurrentPods(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.descheduler.Cycle(ctx); err != nil {
				t.Fatal(err)
			}
			after, err := s.CurrentPods(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var evicted []string
			for uid, p := range before {
				if _, ok := after[uid]; !ok {
					evicted = append(evicted, p.Key.Name+" from "+p.Node)
				}
			}
			t.Logf("evicted: %v", evicted)
			if got := len(evicted) > 0; got != tc.evicted {
				t.Errorf("evicted %v, want evictions: %v", evicted, tc.evicted)
			}
		})
	}
}
