package integration

import (
	"slices"
	"sort"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/spreadreplicas"
)

// secondModePolicy enables both Ballast plugins with the args the chart
// renders in second mode: only ballast-scheduler's pods may move.
var secondModePolicy = `apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
  - name: ballast
    pluginConfig:
      - name: DefaultEvictor
        args:
          nodeFit: true
      - name: LoadAwareBalance
        args:
          window: 2s
          consecutiveHotCycles: 1
          schedulerNames: [ballast-scheduler]
      - name: SpreadReplicas
        args:
          window: 2s
          schedulerNames: [ballast-scheduler]
    plugins:
      balance:
        enabled: [LoadAwareBalance, SpreadReplicas]
`

// A hot node holds pods of Ballast's scheduler and pods the cluster's own
// scheduler placed. The latter are the first candidates of both plugins
// (same size, first by name) yet are never evicted: their replacements would
// be placed by requests, maybe straight back. Ballast's pods move.
func TestPodsOfOtherSchedulersStayOnAHotNode(t *testing.T) {
	byDefaultScheduler := func(rs *appsv1.ReplicaSet) {
		if rs.Name == "alpha" {
			rs.Spec.Template.Spec.SchedulerName = v1.DefaultSchedulerName
		}
	}
	e := hotSpot(t, 20, byDefaultScheduler)
	before := e.podsOf("alpha")
	if len(before) != 2 {
		t.Fatalf("alpha runs %v, want 2 pods on the hot node", before)
	}
	policy := e.writePolicy(secondModePolicy)
	for range 3 {
		e.cycle(policy, false)
	}
	if after := e.podsOf("alpha"); !slices.Equal(before, after) {
		t.Errorf("pods of default-scheduler were evicted: %v before, %v after", before, after)
	}
	moved := e.evictions("hot-memory", "hot") + e.counter(e.metrics.Evictions, spreadreplicas.PluginName, "spread", "hot")
	if moved == 0 {
		t.Fatalf("no pod of ballast-scheduler moved either, so the test proved nothing: %v", e.podNames())
	}
	if n := e.skipped("other-scheduler"); n < 1 {
		t.Errorf("LoadAwareBalance skipped{reason=other-scheduler} = %v, want the alpha pods recorded", n)
	}
	if n := e.counter(e.metrics.SkippedCandidates, spreadreplicas.PluginName, "other-scheduler"); n < 1 {
		t.Errorf("SpreadReplicas skipped{reason=other-scheduler} = %v, want the alpha pods recorded", n)
	}
	t.Logf("%v pods of ballast-scheduler moved; alpha stayed: %v", moved, e.podNames())
}

// podsOf returns "name@node" of the running pods of ReplicaSet rs, sorted.
func (e *env) podsOf(rs string) []string {
	e.t.Helper()
	pods, err := e.c.Client.CoreV1().Pods(namespace).List(e.ctx, metav1.ListOptions{LabelSelector: "app=" + rs})
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, p := range pods.Items {
		if p.DeletionTimestamp == nil {
			out = append(out, p.Name+"@"+p.Spec.NodeName)
		}
	}
	sort.Strings(out)
	return out
}
