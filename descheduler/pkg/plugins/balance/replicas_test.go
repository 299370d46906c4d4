package balance

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

func TestReplicaCounterCountsAControllersPods(t *testing.T) {
	owned := func(name string, uid types.UID, controller bool) *v1.Pod {
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}}
		if uid != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: "ReplicaSet", Name: string(uid), UID: uid, Controller: ptr.To(controller)}}
		}
		return p
	}
	pods := []*v1.Pod{
		owned("a-1", "a", true), owned("a-2", "a", true), owned("a-3", "a", true),
		owned("b-1", "b", true),
		owned("bare", "", false),
		owned("adopted", "c", false), // an owner that is not its controller
	}
	client := fake.NewClientset()
	for _, p := range pods {
		if _, err := client.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	informer := factory.Core().V1().Pods().Informer()
	// Registered twice, as the evictor's minReplicas and the plugin both
	// do: one index.
	if _, err := NewReplicaCounter(informer); err != nil {
		t.Fatal(err)
	}
	counter, err := NewReplicaCounter(informer)
	if err != nil {
		t.Fatalf("a second counter on the same informer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), informer.HasSynced) {
		t.Fatal("pod informer did not sync")
	}
	for _, tc := range []struct {
		pod  *v1.Pod
		want int
	}{{pods[0], 3}, {pods[2], 3}, {pods[3], 1}, {pods[4], 0}, {pods[5], 0}} {
		got, err := counter.Replicas(tc.pod)
		if err != nil || got != tc.want {
			t.Errorf("Replicas(%s) = %d, %v; want %d", tc.pod.Name, got, err, tc.want)
		}
	}
}
