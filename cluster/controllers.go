package cluster

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/scale"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/kubernetes/pkg/controller/daemon"
	"k8s.io/kubernetes/pkg/controller/deployment"
	"k8s.io/kubernetes/pkg/controller/disruption"
	"k8s.io/kubernetes/pkg/controller/job"
	"k8s.io/kubernetes/pkg/controller/replicaset"
	"k8s.io/kubernetes/pkg/controller/statefulset"
	"k8s.io/kubernetes/pkg/controller/volume/persistentvolume"
)

// pvResync is how often the PV controller goes over every volume and claim
// again, kube-controller-manager's default; it acts on changes as they come.
const pvResync = 15 * time.Second

// startControllers runs the kube-controller-manager controllers Ballast's
// behaviour depends on: Deployments and ReplicaSets recreate evicted pods,
// DaemonSets place per-node pods, StatefulSets recreate their pods with the
// same name and claims, the PV controller binds claims to volumes (with the
// in-process local-path provisioner, localPathProvisioner, making the
// volumes), Jobs run pods to completion, and the disruption controller
// keeps PodDisruptionBudget status current so the Eviction API can honour
// it. The garbage collector and node lifecycle are left out: nodes here are
// healthy until removed, and RemoveNode cleans up their pods itself. So is
// the CronJob controller, which reads the real clock (see the simulator's
// CronJobs).
func (c *Cluster) startControllers(ctx context.Context, workers int) error {
	factory := informers.NewSharedInformerFactory(c.Client, 0)
	apps, core := factory.Apps().V1(), factory.Core().V1()

	c.controllerPods = core.Pods().Lister()
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
	sts := statefulset.NewStatefulSetController(ctx, core.Pods(), apps.StatefulSets(), core.PersistentVolumeClaims(),
		apps.ControllerRevisions(), c.Client)
	pv, err := persistentvolume.NewController(ctx, persistentvolume.ControllerParameters{
		KubeClient: c.Client, SyncPeriod: pvResync,
		VolumeInformer: core.PersistentVolumes(), ClaimInformer: core.PersistentVolumeClaims(),
		ClassInformer: factory.Storage().V1().StorageClasses(), PodInformer: core.Pods(), NodeInformer: core.Nodes(),
		EnableDynamicProvisioning: true,
	})
	if err != nil {
		return fmt.Errorf("creating the persistent volume controller: %w", err)
	}
	localPath, err := newLocalPathProvisioner(c.Client, factory)
	if err != nil {
		return err
	}
	// Workload and PodGroup objects are alpha (WorkloadWithJob): off here,
	// as kube-controller-manager passes no informers for them then.
	jobs, err := job.NewController(ctx, c.Client, core.Pods(), factory.Batch().V1().Jobs(), nil, nil)
	if err != nil {
		return fmt.Errorf("creating the job controller: %w", err)
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

	if err := createLocalPathClass(ctx, c.Client); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	c.run(func() { rs.Run(ctx, workers) })
	c.run(func() { deploy.Run(ctx, workers) })
	c.run(func() { ds.Run(ctx, workers) })
	c.run(func() { sts.Run(ctx, workers) })
	c.run(func() { pv.Run(ctx) })
	c.run(func() {
		localPath.run(ctx, core.PersistentVolumeClaims().Informer().HasSynced, core.PersistentVolumes().Informer().HasSynced,
			factory.Storage().V1().StorageClasses().Informer().HasSynced)
	})
	c.run(func() { jobs.Run(ctx, workers) })
	c.run(func() { pdb.Run(ctx) })
	c.run(func() { <-ctx.Done(); factory.Shutdown() })
	return nil
}

// WaitControllersSee waits until every pod named in namespace, as the
// controllers see it, satisfies seen. A change the controllers act on next
// (a scale-down after the pods' deletion costs were set) then meets the
// pods as they were written, however late the controllers' watch runs on
// a busy machine.
func (c *Cluster) WaitControllersSee(ctx context.Context, namespace string, names []string, seen func(*corev1.Pod) bool) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, 2*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for _, name := range names {
			p, err := c.controllerPods.Pods(namespace).Get(name)
			if err != nil || !seen(p) {
				last = name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the controllers to see pod %s/%s as written: %w", namespace, last, err)
	}
	return nil
}
