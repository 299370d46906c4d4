package health

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/installer/pkg/forward"
)

// forwardTo opens a port-forward to one running pod of d, a ready one if
// there is (one that is not ready still answers why on /readyz), to the container
// port behind the Service port svcPort, and returns the local port, the
// pod's name and a function that closes the forward. The forward reaches
// load-watcher although its NetworkPolicy admits only Ballast's scheduler and
// descheduler.
func forwardTo(ctx context.Context, cfg *rest.Config, client kubernetes.Interface, d *appsv1.Deployment, svcPort int) (int, string, func(), error) {
	pod, err := forward.RunningPod(ctx, client, d)
	if err != nil {
		return 0, "", nil, err
	}
	port, err := targetPort(ctx, client, d, pod, svcPort)
	if err != nil {
		return 0, pod.Name, nil, err
	}
	local, stop, err := forward.ToPod(ctx, cfg, client, pod, port)
	return local, pod.Name, stop, err
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
