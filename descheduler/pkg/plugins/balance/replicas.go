package balance

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
	podutil "sigs.k8s.io/descheduler/pkg/descheduler/pod"
)

// ownerIndex is the name under which the descheduler's DefaultEvictor
// indexes pods by their owners' UIDs for minReplicas; registering the same
// name and function keeps one index in the informer, whichever registers
// it first.
const ownerIndex = "metadata.ownerReferences"

// ReplicaCounter counts the pods of a pod's controller as the evictor's
// minReplicas counts them, from the pod informer's owner index rather than
// by listing a namespace's pods per candidate.
type ReplicaCounter struct {
	indexer cache.Indexer
}

// NewReplicaCounter adds the owner index to the pod informer, unless it
// is there already, and returns a counter reading it.
func NewReplicaCounter(informer cache.SharedIndexInformer) (*ReplicaCounter, error) {
	if _, ok := informer.GetIndexer().GetIndexers()[ownerIndex]; !ok {
		err := informer.AddIndexers(cache.Indexers{ownerIndex: func(obj any) ([]string, error) {
			pod, ok := obj.(*v1.Pod)
			if !ok {
				return nil, errors.New("not a pod")
			}
			return podutil.OwnerRefUIDs(pod), nil
		}})
		if err != nil {
			return nil, fmt.Errorf("indexing pods by owner: %w", err)
		}
	}
	return &ReplicaCounter{indexer: informer.GetIndexer()}, nil
}

// Replicas returns how many pods the informer holds of pod's controller,
// pod included; 0 for a pod without one.
func (c *ReplicaCounter) Replicas(pod *v1.Pod) (int, error) {
	ref := metav1.GetControllerOf(pod)
	if ref == nil {
		return 0, nil
	}
	objs, err := c.indexer.ByIndex(ownerIndex, string(ref.UID))
	if err != nil {
		return 0, fmt.Errorf("pods of %s %s: %w", ref.Kind, ref.Name, err)
	}
	return len(objs), nil
}
