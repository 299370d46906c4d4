package cluster

import (
	"context"
	"fmt"
	"time"

	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/kubernetes/pkg/controller/replicaset"
)

// startControllers runs the kube-controller-manager controllers Ballast's
// behaviour depends on: Deployments and ReplicaSets recreate evicted pods,
// DaemonSets place per-node pods, and the disruption controller keeps
// PodDisruptionBudget status current so the Eviction API can honour it.
// The garbage collector and node lifecycle are left out: nodes here are
// healthy until removed, and RemoveNode cleans up their pods itself.
func (c *Cluster) startControllers(ctx context.Context, workers int) error {
	factory := informers.NewSharedInformerFactory(c.Client, 0)
	apps, core := factory.Apps().V1(), factory.Core().V1()

	rs := replicaset.NewReplicaSetController(ctx, apps.ReplicaSets(), core.Pods(), c.Client, replicaset.BurstReplicas)
	deploy, err := deployment.NewDeploymentController(ctx, apps.Deployments(), apps.ReplicaSets(), core.Pods(), c.Client)
	if err != nil {
		return fmt.Errorf("creating the deployment controller: %w", err)
	}
	ds, err := daemon.NewDaemonSetsController(ctx, apps.DaemonSets(), apps.ControllerRevisions(), core.Pods(),
		core.Nodes(), c.Client, flowcontrol.NewBackOff(time.Second, 15*time.Second))
	if err != nil {
		return fmt.Errorf("creating the daemonset controller: %w", err)
	}

	cachedDiscovery := memory.NewMemCacheClient(c.Client.Discovery())
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cachedDiscovery)
	scaleClient, err := scale.NewForConfig(c.RestConfig, mapper, dynamic.LegacyAPIPathResolverFunc,
		scale.NewDiscoveryScaleKindResolver(cachedDiscovery))
	if err != nil {
		return fmt.Errorf("creating the scale client: %w", err)
	}
	pdb := disruption.NewDisruptionController(ctx, core.Pods(), factory.Policy().V1().PodDisruptionBudgets(),
		core.ReplicationControllers(), apps.ReplicaSets(), apps.Deployments(), apps.StatefulSets(),
		c.Client, mapper, scaleClient, c.Client.Discovery())

	factory.Start(ctx.Done())
	c.run(func() { rs.Run(ctx, workers) })
	c.run(func() { deploy.Run(ctx, workers) })
	c.run(func() { ds.Run(ctx, workers) })
	c.run(func() { pdb.Run(ctx) })
	c.run(func() { <-ctx.Done(); factory.Shutdown() })
	return nil
}
