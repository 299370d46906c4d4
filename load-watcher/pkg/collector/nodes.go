package collector

import (
	"context"
	"fmt"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/ballast-sched/ballast/load-watcher/pkg/provider"
)

// NodeSource lists the nodes that currently exist. Samples for other nodes
// are discarded and their buffers freed.
type NodeSource interface {
	Nodes() ([]provider.Node, error)
}

// changeNotifier is implemented by node sources that can tell the collector
// about added or deleted nodes between sampling rounds.
type changeNotifier interface {
	Changed() <-chan struct{}
}

// starter is implemented by node sources that must start and sync before
// their first Nodes call.
type starter interface {
	Start(ctx context.Context) error
}

// InformerNodes is a NodeSource backed by a Node informer: nodes added to
// the cluster appear and deleted ones drop out without a restart.
type InformerNodes struct {
	factory informers.SharedInformerFactory
	lister  corelisters.NodeLister
	synced  cache.InformerSynced
	changed chan struct{}
}

// NewInformerNodes watches the Nodes of client. Call Start before use (the
// collector does when it runs).
func NewInformerNodes(client kubernetes.Interface) *InformerNodes {
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	inf := factory.Core().V1().Nodes()
	s := &InformerNodes{
		factory: factory,
		lister:  inf.Lister(),
		synced:  inf.Informer().HasSynced,
		changed: make(chan struct{}, 1),
	}
	notify := func(any) {
		select {
		case s.changed <- struct{}{}:
		default:
		}
	}
	_, _ = inf.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: notify, DeleteFunc: notify})
	return s
}

// Start runs the informer and waits for its cache to fill.
func (s *InformerNodes) Start(ctx context.Context) error {
	s.factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), s.synced) {
		return fmt.Errorf("waiting for the Node informer to sync: %w", ctx.Err())
	}
	return nil
}

// Changed is signalled when a node is added or deleted.
func (s *InformerNodes) Changed() <-chan struct{} { return s.changed }

// Nodes implements NodeSource.
func (s *InformerNodes) Nodes() ([]provider.Node, error) {
	list, err := s.lister.List(labels.Everything())
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	return nodesFromAPI(list), nil
}

func nodesFromAPI(list []*corev1.Node) []provider.Node {
	out := make([]provider.Node, 0, len(list))
	for _, n := range list {
		out = append(out, provider.NodeFromAPI(n))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// StaticNodes is a fixed node list, for tests and demos without a cluster.
type StaticNodes []provider.Node

// Nodes implements NodeSource.
func (s StaticNodes) Nodes() ([]provider.Node, error) { return s, nil }
