package cluster

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestStatusUpdateReportsReadyAgain: after an API server outage the node
// lifecycle controller has set Ready to Unknown; the stand-in's next status
// update must report the node Ready again, as a kubelet's does, and keep
// conditions it does not own.
func TestStatusUpdateReportsReadyAgain(t *testing.T) {
	ctx := t.Context()
	conds := nodeConditions(metav1.Now())
	conds[0].Status, conds[0].Reason = corev1.ConditionUnknown, "NodeStatusUnknown"
	conds = append(conds, corev1.NodeCondition{Type: "NetworkUnavailable", Status: corev1.ConditionFalse})
	client := fake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "pi-1"}, Status: corev1.NodeStatus{Conditions: conds}})
	k := newKubelet(client, nil)
	if err := k.touchNodeStatus(ctx, "pi-1"); err != nil {
		t.Fatal(err)
	}
	node, err := client.CoreV1().Nodes().Get(ctx, "pi-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[corev1.NodeConditionType]corev1.ConditionStatus{}
	for _, c := range node.Status.Conditions {
		got[c.Type] = c.Status
	}
	if got[corev1.NodeReady] != corev1.ConditionTrue || got["NetworkUnavailable"] != corev1.ConditionFalse || len(got) != 5 {
		t.Errorf("conditions after a status update = %v, want Ready=True and NetworkUnavailable kept", got)
	}
}
