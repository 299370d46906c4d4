package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
)

const (
	// leaseDuration and heartbeatPeriod mirror the kubelet's defaults.
	leaseDuration   = 40 * time.Second
	heartbeatPeriod = 10 * time.Second
	// statusEvery is how many heartbeats pass between Ready condition updates.
	statusEvery    = 6
	kubeletWorkers = 4
)

// kubelet stands in for the kubelets of all simulated nodes: it starts the
// pods bound to them (Running, Ready, with a pod IP), finishes the deletion
// of terminating pods, and renews each node's Lease and Ready condition.
// Containers are not run; usage comes from the simulator's usage model.
type kubelet struct {
	client kubernetes.Interface
	// clock stamps pods' start times.
	clock clock.PassiveClock
	// endsRuns: the stand-in ends the pods whose run is over by itself, as
	// it sees them and at each heartbeat; off on a clock of the caller's,
	// which ends them with Cluster.EndRuns when its clock has moved.
	endsRuns bool
	queue    workqueue.TypedRateLimitingInterface[string]
	pods     corelisters.PodLister

	mu        sync.Mutex
	nodes     map[string]*simNode
	nextIndex int
	// podsListed is pods, for setDown, once the informer runs.
	podsListed corelisters.PodLister
}

type simNode struct {
	index  int
	nextIP int
	// down: the machine is off (SetReachable): no heartbeat, nothing
	// started or finished on it.
	down bool
}

func newKubelet(client kubernetes.Interface, clk clock.PassiveClock) *kubelet {
	endsRuns := clk == nil
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &kubelet{
		client:   client,
		clock:    clk,
		endsRuns: endsRuns,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "kubelet"}),
		nodes: map[string]*simNode{},
	}
}

// register makes name a node this kubelet runs and returns its index, which
// fixes its addresses.
func (k *kubelet) register(name string) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if n, ok := k.nodes[name]; ok {
		return n.index
	}
	n := &simNode{index: k.nextIndex}
	k.nextIndex++
	k.nodes[name] = n
	return n.index
}

func (k *kubelet) unregister(name string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.nodes, name)
}

// owns reports whether node is one of this kubelet's and up.
func (k *kubelet) owns(node string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, ok := k.nodes[node]
	return ok && !n.down
}

// setDown stops (true) or resumes (false) everything the kubelet does for
// node; resumed, it takes up every pod bound to the node, as a kubelet
// that starts again does.
func (k *kubelet) setDown(node string, down bool) {
	k.mu.Lock()
	if n, ok := k.nodes[node]; ok {
		n.down = down
	}
	lister := k.podsListed
	k.mu.Unlock()
	if down || lister == nil {
		return
	}
	pods, err := lister.List(labels.Everything())
	if err != nil {
		return
	}
	for _, p := range pods {
		if p.Spec.NodeName == node {
			k.queue.Add(p.Namespace + "/" + p.Name)
		}
	}
}

// allocateIP hands out the next pod IP of a node, or "" when the node is not
// one of ours.
func (k *kubelet) allocateIP(node string) (hostIP, podIP string, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	n, ok := k.nodes[node]
	if !ok {
		return "", "", false
	}
	n.nextIP = n.nextIP%253 + 1
	return nodeIP(n.index), fmt.Sprintf("10.%d.%d.%d", 100+n.index/256, n.index%256, n.nextIP+1), true
}

func (k *kubelet) nodeNames() []string {
	k.mu.Lock()
	defer k.mu.Unlock()
	names := make([]string, 0, len(k.nodes))
	for name, n := range k.nodes {
		if !n.down {
			names = append(names, name)
		}
	}
	return names
}

func (k *kubelet) run(ctx context.Context) {
	defer k.queue.ShutDown()
	factory := informers.NewSharedInformerFactory(k.client, 0)
	podInformer := factory.Core().V1().Pods()
	k.pods = podInformer.Lister()
	k.mu.Lock()
	k.podsListed = k.pods
	k.mu.Unlock()
	enqueue := func(obj any) {
		pod, ok := obj.(*corev1.Pod)
		if !ok || pod.Spec.NodeName == "" {
			return
		}
		if key, err := cache.MetaNamespaceKeyFunc(pod); err == nil {
			k.queue.Add(key)
		}
	}
	if _, err := podInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
	}); err != nil {
		klog.FromContext(ctx).Error(err, "Kubelet stand-in cannot watch pods")
		return
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	if !cache.WaitForCacheSync(ctx.Done(), podInformer.Informer().HasSynced) {
		return
	}

	var wg sync.WaitGroup
	for range kubeletWorkers {
		wg.Go(func() {
			for k.processNext(ctx) {
			}
		})
	}
	wg.Go(func() { k.heartbeat(ctx) })
	<-ctx.Done()
	k.queue.ShutDown()
	wg.Wait()
}

func (k *kubelet) processNext(ctx context.Context) bool {
	key, quit := k.queue.Get()
	if quit {
		return false
	}
	defer k.queue.Done(key)
	if err := k.sync(ctx, key); err != nil {
		klog.FromContext(ctx).V(4).Info("Kubelet stand-in will retry", "pod", key, "err", err)
		k.queue.AddRateLimited(key)
		return true
	}
	k.queue.Forget(key)
	return true
}

// sync moves one pod towards what a kubelet would make of it.
func (k *kubelet) sync(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	pod, err := k.pods.Pods(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !k.owns(pod.Spec.NodeName) {
		return nil
	}
	if pod.DeletionTimestamp != nil {
		// Containers "stop" at once; finish the graceful deletion. A pod
		// a finalizer holds (a Job's) is first given a terminal phase, as
		// a kubelet gives it once its containers stopped, so that its
		// controller counts it and lets it go.
		if len(pod.Finalizers) > 0 && !isTerminal(pod) {
			if err := MarkFailed(ctx, k.client, pod, "Terminated", metav1.Now()); err != nil {
				return err
			}
		}
		opts := metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0), Preconditions: metav1.NewUIDPreconditions(string(pod.UID))}
		err := k.client.CoreV1().Pods(namespace).Delete(ctx, name, opts)
		if isNotFound(err) || apierrors.IsConflict(err) {
			return nil
		}
		return err
	}
	if isTerminal(pod) {
		return nil
	}
	if podRunningAndReady(pod) {
		if k.endsRuns {
			return k.endIfDone(ctx, pod)
		}
		return nil
	}
	hostIP, podIP, ours := k.allocateIP(pod.Spec.NodeName)
	if !ours {
		return nil
	}
	started := runningStatus(pod, hostIP, podIP, metav1.NewTime(k.clock.Now()))
	_, err = k.client.CoreV1().Pods(namespace).UpdateStatus(ctx, started, metav1.UpdateOptions{})
	if isNotFound(err) {
		return nil
	}
	return err
}

// RunsForAnnotation on a pod that runs to completion (a Job's) is how long
// its containers run once started, as a Go duration ("3m"); the kubelet
// stand-in then ends the pod, Succeeded, at the first look it takes at it
// once that much time of its clock has passed since the pod started (see
// Cluster.EndRuns). Such a pod's restartPolicy must not be Always.
const RunsForAnnotation = "cluster.ballast-sched.io/runs-for"

// runIsOver reports whether pod's containers have run for as long as its
// RunsForAnnotation says by now; false without a valid one or before start.
func runIsOver(pod *corev1.Pod, now time.Time) bool {
	runsFor, err := time.ParseDuration(pod.Annotations[RunsForAnnotation])
	if err != nil || runsFor < 0 || pod.Status.StartTime == nil || pod.Spec.RestartPolicy == corev1.RestartPolicyAlways {
		return false
	}
	return !now.Before(pod.Status.StartTime.Add(runsFor))
}

// endIfDone ends pod, Succeeded, when its run is over.
func (k *kubelet) endIfDone(ctx context.Context, pod *corev1.Pod) error {
	now := k.clock.Now()
	if !runIsOver(pod, now) {
		return nil
	}
	_, err := k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, succeededStatus(pod, metav1.NewTime(now)), metav1.UpdateOptions{})
	if isNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// endRuns ends every pod on an up node whose run is over, and returns how
// many it ended.
func (k *kubelet) endRuns(ctx context.Context) (int, error) {
	k.mu.Lock()
	lister := k.podsListed
	k.mu.Unlock()
	if lister == nil {
		return 0, nil
	}
	pods, err := k.client.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, fmt.Errorf("listing pods: %w", err)
	}
	now, ended := k.clock.Now(), 0
	for i := range pods.Items {
		pod := &pods.Items[i]
		if pod.DeletionTimestamp != nil || !podRunningAndReady(pod) || !k.owns(pod.Spec.NodeName) || !runIsOver(pod, now) {
			continue
		}
		if err := k.endIfDone(ctx, pod); err != nil {
			return ended, fmt.Errorf("ending pod %s/%s: %w", pod.Namespace, pod.Name, err)
		}
		ended++
	}
	return ended, nil
}

// succeededStatus returns a copy of pod with the status of a pod whose
// containers all exited 0 at now.
func succeededStatus(pod *corev1.Pod, now metav1.Time) *corev1.Pod {
	pod = pod.DeepCopy()
	s := &pod.Status
	s.Phase = corev1.PodSucceeded
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.ContainersReady, corev1.PodReady} {
		setPodCondition(s, corev1.PodCondition{Type: t, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now})
	}
	for i := range s.ContainerStatuses {
		cs := &s.ContainerStatuses[i]
		var started metav1.Time
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.Ready, cs.Started = false, ptr.To(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: 0, Reason: "Completed", StartedAt: started, FinishedAt: now, ContainerID: cs.ContainerID}}
	}
	return pod
}

// MarkFailed gives pod the Failed phase at now, for reason, its containers
// terminated: what a kubelet reports of a deleted pod once its containers
// stopped, or the pod garbage collector of a pod on a node that is gone. A
// pod already gone is no error. Give it the real time, whatever clock the
// cluster's pods start on: the Job controller holds a failed pod's
// replacement back for some seconds from the time it failed, read against
// the real clock, and a simulated time ahead of it would hold it back for
// as long again.
func MarkFailed(ctx context.Context, client kubernetes.Interface, pod *corev1.Pod, reason string, now metav1.Time) error {
	pod = succeededStatus(pod, now)
	pod.Status.Phase, pod.Status.Reason = corev1.PodFailed, reason
	for i := range pod.Status.ContainerStatuses {
		if t := pod.Status.ContainerStatuses[i].State.Terminated; t != nil {
			t.ExitCode, t.Reason = 137, "Error"
		}
	}
	setPodCondition(&pod.Status, corev1.PodCondition{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, LastTransitionTime: now})
	_, err := client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("marking pod %s/%s failed: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// runningStatus returns a copy of pod with the status of a pod whose
// containers all started and passed their readiness checks at now.
func runningStatus(pod *corev1.Pod, hostIP, podIP string, now metav1.Time) *corev1.Pod {
	pod = pod.DeepCopy()
	s := &pod.Status
	s.Phase = corev1.PodRunning
	s.HostIP, s.HostIPs = hostIP, []corev1.HostIP{{IP: hostIP}}
	s.PodIP, s.PodIPs = podIP, []corev1.PodIP{{IP: podIP}}
	s.StartTime = &now
	for _, t := range []corev1.PodConditionType{corev1.PodReadyToStartContainers, corev1.PodInitialized,
		corev1.ContainersReady, corev1.PodReady, corev1.PodScheduled} {
		setPodCondition(s, corev1.PodCondition{Type: t, Status: corev1.ConditionTrue, LastTransitionTime: now})
	}
	s.ContainerStatuses = make([]corev1.ContainerStatus, 0, len(pod.Spec.Containers))
	for _, ctr := range pod.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{
			Name:        ctr.Name,
			Image:       ctr.Image,
			ImageID:     ctr.Image,
			ContainerID: "sim://" + string(pod.UID) + "/" + ctr.Name,
			Ready:       true,
			Started:     ptr.To(true),
			State:       corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
	}
	return pod
}

func setPodCondition(s *corev1.PodStatus, c corev1.PodCondition) {
	for i := range s.Conditions {
		if s.Conditions[i].Type == c.Type {
			if s.Conditions[i].Status != c.Status {
				s.Conditions[i] = c
			}
			return
		}
	}
	s.Conditions = append(s.Conditions, c)
}

func podRunningAndReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func isTerminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

func isNotFound(err error) bool { return err != nil && apierrors.IsNotFound(err) }

// heartbeat renews every node's Lease each period and its Ready condition
// every statusEvery periods, as a kubelet does.
//
// After a heartbeat failed (the API server was away), the node's status is
// reported again at the next one, as a kubelet reports it when it gets
// through again, so that the node lifecycle controller's Unknown does not
// stand for a whole statusEvery.
func (k *kubelet) heartbeat(ctx context.Context) {
	tick := 0
	missed := false
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		report := tick%statusEvery == 0 || missed
		missed = false
		if k.endsRuns {
			if _, err := k.endRuns(ctx); err != nil {
				klog.FromContext(ctx).V(2).Info("Ending the pods whose run is over failed", "err", err)
			}
		}
		for _, name := range k.nodeNames() {
			if err := k.renewLease(ctx, name); err != nil {
				missed = true
				klog.FromContext(ctx).V(2).Info("Renewing node lease failed", "node", name, "err", err)
			}
			if report {
				if err := k.touchNodeStatus(ctx, name); err != nil {
					missed = true
					klog.FromContext(ctx).V(2).Info("Updating node status failed", "node", name, "err", err)
				}
			}
		}
		tick++
	}, heartbeatPeriod)
}

func (k *kubelet) renewLease(ctx context.Context, node string) error {
	leases := k.client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	now := metav1.NewMicroTime(time.Now())
	lease, err := leases.Get(ctx, node, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		_, err = leases.Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: corev1.NamespaceNodeLease},
			Spec: coordinationv1.LeaseSpec{
				HolderIdentity:       ptr.To(node),
				LeaseDurationSeconds: ptr.To(int32(leaseDuration.Seconds())),
				RenewTime:            &now,
			},
		}, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	lease.Spec.RenewTime = &now
	_, err = leases.Update(ctx, lease, metav1.UpdateOptions{})
	return err
}

func (k *kubelet) touchNodeStatus(ctx context.Context, name string) error {
	node, err := k.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	// Like a kubelet, report the node as the stand-in sees it — healthy —
	// not merely refresh what is there: a condition the node lifecycle
	// controller set to Unknown while heartbeats failed (an API server
	// outage) turns back at the next update, as it does on a real node.
	reported := nodeConditions(metav1.Now())
	for i, c := range reported {
		for _, old := range node.Status.Conditions {
			if old.Type == c.Type && old.Status == c.Status {
				reported[i].LastTransitionTime = old.LastTransitionTime
			}
		}
	}
	for _, old := range node.Status.Conditions {
		if !slices.ContainsFunc(reported, func(c corev1.NodeCondition) bool { return c.Type == old.Type }) {
			reported = append(reported, old)
		}
	}
	node.Status.Conditions = reported
	_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}
