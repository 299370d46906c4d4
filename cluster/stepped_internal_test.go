package cluster

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The gate lets a pod of the round in only once the round has come to it,
// and once: a plugin that activates a pod itself (as LoadAware does when a
// node cools down) meets a closed gate until then, so it cannot put the pod
// ahead of its turn in the round's order.
func TestStepGateLetsPodsInOnTheirTurnOnly(t *testing.T) {
	pod := func(uid string) *corev1.Pod { return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{UID: types.UID(uid)}} }
	g := &stepGate{}
	ctx := context.Background()
	admitted := func(uid string) bool { return g.PreEnqueue(ctx, pod(uid)).IsSuccess() }

	if admitted("a") {
		t.Fatal("a closed gate let a pod in")
	}
	g.open(map[string]*corev1.Pod{"a": pod("a"), "b": pod("b")})
	if admitted("b") {
		t.Error("the gate let b in before its turn")
	}
	g.let("a")
	g.let("c") // not a pod of the round
	if !admitted("a") || admitted("a") {
		t.Error("on its turn, a should go in once")
	}
	if admitted("c") {
		t.Error("the gate let in a pod it was not opened for")
	}
	if g.allEntered() {
		t.Error("all entered while b waits")
	}
	g.let("b")
	if !admitted("b") || !g.allEntered() {
		t.Error("b should go in on its turn, and then all have entered")
	}
	g.close()
	g.let("a")
	if admitted("a") {
		t.Error("a closed gate let a pod in")
	}
}
