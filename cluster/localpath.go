package cluster

import (
	"context"
	"fmt"
	"path"
	"sync"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
)

const (
	// LocalPathStorageClass is the StorageClass every cluster starts with,
	// the default one, as k3s ships its local-path class: volumes are bound
	// when their first pod is placed (WaitForFirstConsumer) and live on that
	// pod's node for good.
	LocalPathStorageClass = "local-path"
	// LocalPathProvisioner is the provisioner of LocalPathStorageClass, the
	// in-process local-path provisioner.
	LocalPathProvisioner = "cluster.ballast-sched.io/local-path"
	// LocalPathDir is where on its node a volume's directory is said to be.
	LocalPathDir = "/var/lib/rancher/k3s/storage"

	// annSelectedNode is set by the scheduler on a claim of a
	// WaitForFirstConsumer class once its first pod is placed;
	// annStorageProvisioner by the PV controller on a claim it leaves to an
	// external provisioner; annProvisionedBy marks the volumes a
	// provisioner made.
	annSelectedNode       = "volume.kubernetes.io/selected-node"
	annStorageProvisioner = "volume.kubernetes.io/storage-provisioner"
	annProvisionedBy      = "pv.kubernetes.io/provisioned-by"
	annDefaultClass       = "storageclass.kubernetes.io/is-default-class"
	localPathWorkers      = 2
)

// localPathProvisioner stands in for k3s's local-path provisioner, the
// external provisioner of LocalPathStorageClass: for a claim the PV
// controller leaves to it once the scheduler has chosen a node for its first
// pod, it creates a hostPath volume whose required node affinity is that
// node, pre-bound to the claim (the PV controller completes the binding);
// from then on the scheduler's VolumeBinding filter places the claim's pods
// on that node alone. No directory is made (containers do not run), and
// volumes are never deleted: nothing here deletes a claim, and without the
// protection controllers a deleted claim would stay terminating.
type localPathProvisioner struct {
	client  kubernetes.Interface
	claims  corelisters.PersistentVolumeClaimLister
	volumes corelisters.PersistentVolumeLister
	classes storagelisters.StorageClassLister
	queue   workqueue.TypedRateLimitingInterface[string]
}

// newLocalPathProvisioner registers the provisioner's informers on
// factory; the caller starts factory and then runs the provisioner.
func newLocalPathProvisioner(client kubernetes.Interface, factory informers.SharedInformerFactory) (*localPathProvisioner, error) {
	p := &localPathProvisioner{
		client:  client,
		claims:  factory.Core().V1().PersistentVolumeClaims().Lister(),
		volumes: factory.Core().V1().PersistentVolumes().Lister(),
		classes: factory.Storage().V1().StorageClasses().Lister(),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "local-path-provisioner"}),
	}
	enqueue := func(obj any) {
		if key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj); err == nil {
			p.queue.Add(key)
		}
	}
	handler := cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }}
	if _, err := factory.Core().V1().PersistentVolumeClaims().Informer().AddEventHandler(handler); err != nil {
		return nil, fmt.Errorf("watching claims for the local-path provisioner: %w", err)
	}
	factory.Core().V1().PersistentVolumes().Informer()
	factory.Storage().V1().StorageClasses().Informer()
	return p, nil
}

func (p *localPathProvisioner) run(ctx context.Context, synced ...cache.InformerSynced) {
	defer p.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return
	}
	logger := klog.FromContext(ctx).WithName("local-path-provisioner")
	var wg sync.WaitGroup
	for range localPathWorkers {
		wg.Go(func() {
			for {
				key, quit := p.queue.Get()
				if quit {
					return
				}
				if err := p.sync(ctx, key); err != nil {
					logger.V(2).Info("Local-path provisioner will retry", "key", key, "err", err)
					p.queue.AddRateLimited(key)
				} else {
					p.queue.Forget(key)
				}
				p.queue.Done(key)
			}
		})
	}
	<-ctx.Done()
	p.queue.ShutDown()
	wg.Wait()
}

func (p *localPathProvisioner) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	return p.syncClaim(ctx, namespace, name)
}

// syncClaim provisions a volume for a claim of one of the provisioner's
// classes that waits for one on a node.
func (p *localPathProvisioner) syncClaim(ctx context.Context, namespace, name string) error {
	claim, err := p.claims.PersistentVolumeClaims(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	node := claim.Annotations[annSelectedNode]
	if claim.Spec.VolumeName != "" || claim.DeletionTimestamp != nil || node == "" ||
		claim.Annotations[annStorageProvisioner] != LocalPathProvisioner {
		return nil
	}
	class, err := p.classes.Get(ptr.Deref(claim.Spec.StorageClassName, ""))
	if err != nil || class.Provisioner != LocalPathProvisioner {
		return nil
	}
	pv := localPathVolume(claim, class, node)
	if _, err := p.volumes.Get(pv.Name); err == nil {
		return nil
	}
	_, err = p.client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("creating volume %s for claim %s/%s: %w", pv.Name, namespace, name, err)
	}
	klog.FromContext(ctx).V(2).Info("Provisioned a local-path volume", "claim", klog.KObj(claim), "volume", pv.Name, "node", node)
	return nil
}

// localPathVolume is the volume provisioned for claim on node: a hostPath
// directory named after the claim, reachable from node alone, of the
// capacity and access modes the claim asks for, pre-bound to it.
func localPathVolume(claim *corev1.PersistentVolumeClaim, class *storagev1.StorageClass, node string) *corev1.PersistentVolume {
	name := "pvc-" + string(claim.UID)
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{annProvisionedBy: LocalPathProvisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:    corev1.ResourceList{corev1.ResourceStorage: claim.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes: claim.Spec.AccessModes,
			ClaimRef: &corev1.ObjectReference{Kind: "PersistentVolumeClaim", APIVersion: "v1",
				Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID, ResourceVersion: claim.ResourceVersion},
			PersistentVolumeReclaimPolicy: ptr.Deref(class.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete),
			StorageClassName:              class.Name,
			VolumeMode:                    claim.Spec.VolumeMode,
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: path.Join(LocalPathDir, name+"_"+claim.Namespace+"_"+claim.Name),
				Type: ptr.To(corev1.HostPathDirectoryOrCreate),
			}},
			NodeAffinity: PinnedTo(node),
		},
	}
}

// PinnedTo is the node affinity of a volume that lives on node alone.
func PinnedTo(node string) *corev1.VolumeNodeAffinity {
	return &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
	}}}}
}

// localPathClass is LocalPathStorageClass, the cluster's default class.
func localPathClass() *storagev1.StorageClass {
	return &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: LocalPathStorageClass, Annotations: map[string]string{annDefaultClass: "true"}},
		Provisioner:       LocalPathProvisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
	}
}

// createLocalPathClass creates LocalPathStorageClass unless it is there.
func createLocalPathClass(ctx context.Context, client kubernetes.Interface) error {
	_, err := client.StorageV1().StorageClasses().Create(ctx, localPathClass(), metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating storage class %s: %w", LocalPathStorageClass, err)
	}
	return nil
}
