package health

import (
	"context"
	"fmt"
	"io"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// forward opens a port-forward to one running pod of d, a ready one if
// there is (one that is not ready still answers why on /readyz), to the container
// port behind the Service port svcPort, and returns the local port, the
// pod's name and a function that closes the forward. The API server and the
// kubelet carry the connection into the pod's own network namespace, so
// load-watcher's NetworkPolicy, which admits only Ballast's scheduler and
// descheduler, does not stand in the way, wherever the pod runs.
func forward(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, d *appsv1.Deployment, svcPort int) (int, string, func(), error) {
	pod, err := runningPod(ctx, client, d)
	if err != nil {
		return 0, "", nil, err
	}
	port, err := targetPort(ctx, client, d, pod, svcPort)
	if err != nil {
		return 0, pod.Name, nil, err
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, pod.Name, nil, fmt.Errorf("port-forward transport: %w", err)
	}
	url := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, pod.Name, nil, fmt.Errorf("port-forward to pod %s: %w", pod.Name, err)
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return 0, pod.Name, nil, fmt.Errorf("port-forward to pod %s: %w", pod.Name, err)
	case <-ctx.Done():
		close(stop)
		return 0, pod.Name, nil, fmt.Errorf("port-forward to pod %s: %w", pod.Name, ctx.Err())
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stop)
		return 0, pod.Name, nil, fmt.Errorf("port-forward to pod %s: no local port: %v", pod.Name, err)
	}
	return int(ports[0].Local), pod.Name, func() { close(stop) }, nil
}

// runningPod returns a ready pod of d, else a running one.
func runningPod(ctx context.Context, client kubernetes.Interface, d *appsv1.Deployment) (*corev1.Pod, error) {
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil {
		return nil, fmt.Errorf("selector of Deployment %s: %w", d.Name, err)
	}
	pods, err := client.CoreV1().Pods(d.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("list pods of %s: %w", d.Name, err)
	}
	var running *corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			continue
		}
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
				return p, nil
			}
		}
		if running == nil {
			running = p
		}
	}
	if running == nil {
		return nil, fmt.Errorf("no running pod of %s", d.Name)
	}
	return running, nil
}

// targetPort resolves the Service port svcPort of the Service named like d
// to the container port of pod it forwards to.
func targetPort(ctx context.Context, client kubernetes.Interface, d *appsv1.Deployment, pod *corev1.Pod, svcPort int) (int, error) {
	svc, err := client.CoreV1().Services(d.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
	if err != nil {
		return 0, fmt.Errorf("read Service %s: %w", d.Name, err)
	}
	for _, sp := range svc.Spec.Ports {
		if int(sp.Port) != svcPort {
			continue
		}
		if sp.TargetPort.Type == intstr.Int {
			if sp.TargetPort.IntVal == 0 {
				return svcPort, nil
			}
			return int(sp.TargetPort.IntVal), nil
		}
		for _, c := range pod.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == sp.TargetPort.StrVal {
					return int(cp.ContainerPort), nil
				}
			}
		}
		return 0, fmt.Errorf("pod %s has no port named %q", pod.Name, sp.TargetPort.StrVal)
	}
	return 0, fmt.Errorf("Service %s has no port %d", d.Name, svcPort)
}
