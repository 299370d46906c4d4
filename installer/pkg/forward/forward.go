// Package forward reaches a port of a Ballast pod through the API server's
// port-forward, the way kubectl port-forward does: the API server and the
// kubelet carry the connection into the pod's own network namespace, so it
// reaches ports a NetworkPolicy keeps to Ballast's components, and ports
// that listen on the pod's loopback only, wherever the pod runs, as far as
// the user's pods/portforward right goes.
package forward

import (
	"context"
	"fmt"
	"io"
	"net/http"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// ToPod opens a port-forward to port of pod and returns the local port it
// listens on (on 127.0.0.1) and a function that closes it.
func ToPod(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, pod *corev1.Pod, port int) (int, func(), error) {
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return 0, nil, fmt.Errorf("port-forward transport: %w", err)
	}
	url := client.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	stop, ready := make(chan struct{}), make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)}, stop, ready, io.Discard, io.Discard)
	if err != nil {
		return 0, nil, fmt.Errorf("port-forward to pod %s: %w", pod.Name, err)
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return 0, nil, fmt.Errorf("port-forward to pod %s: %w", pod.Name, err)
	case <-ctx.Done():
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to pod %s: %w", pod.Name, ctx.Err())
	}
	ports, err := fw.GetPorts()
	if err != nil || len(ports) == 0 {
		close(stop)
		return 0, nil, fmt.Errorf("port-forward to pod %s: no local port: %v", pod.Name, err)
	}
	return int(ports[0].Local), func() { close(stop) }, nil
}

// RunningPod returns a ready pod of d, else a running one.
func RunningPod(ctx context.Context, client kubernetes.Interface, d *appsv1.Deployment) (*corev1.Pod, error) {
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
