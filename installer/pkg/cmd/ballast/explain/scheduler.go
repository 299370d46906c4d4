package explain

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/installer/pkg/forward"
	"github.com/ballast-sched/ballast/scheduler/pkg/explanation"
)

// Scheduler says where Ballast's scheduler would place a pod now, and why.
type Scheduler interface {
	ExplainPod(ctx context.Context, namespace, name string) (*explanation.Response, error)
}

// NewScheduler returns the Scheduler of the release name in namespace.
type NewScheduler func(cfg *rest.Config, client kubernetes.Interface, namespace, release string) Scheduler

// releaseScheduler asks a running pod of the release's scheduler, on its
// explain endpoint, through the API server's port-forward: the scheduler
// explains with its own configuration, plugins and usage, and the CLI links
// none of them.
type releaseScheduler struct {
	cfg                *rest.Config
	client             kubernetes.Interface
	namespace, release string
}

func newReleaseScheduler(cfg *rest.Config, client kubernetes.Interface, namespace, release string) Scheduler {
	return releaseScheduler{cfg: cfg, client: client, namespace: namespace, release: release}
}

func (s releaseScheduler) ExplainPod(ctx context.Context, namespace, name string) (*explanation.Response, error) {
	deployment := charts.ComponentFullname(s.release, "scheduler")
	d, err := s.client.AppsV1().Deployments(s.namespace).Get(ctx, deployment, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading the scheduler's Deployment %s/%s: %w", s.namespace, deployment, err)
	}
	pod, err := forward.RunningPod(ctx, s.client, d)
	if err != nil {
		return nil, fmt.Errorf("%w: explain pod asks the scheduler, which must be running (`ballast status` says why it is not)", err)
	}
	port, err := explainPort(pod)
	if err != nil {
		return nil, err
	}
	local, stop, err := forward.ToPod(ctx, s.cfg, s.client, pod, port)
	if err != nil {
		return nil, fmt.Errorf("%w (explain pod needs the pods/portforward right in namespace %s)", err, s.namespace)
	}
	defer stop()
	return explanation.Get(ctx, http.DefaultClient, "http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(local)), namespace, name)
}

// explainPort is the port of pod's explain endpoint: the one of its
// --explain-address, or the default. A scheduler that serves none says so.
func explainPort(pod *corev1.Pod) (int, error) {
	for _, c := range pod.Spec.Containers {
		for _, arg := range c.Args {
			v, ok := strings.CutPrefix(arg, "--explain-address=")
			if !ok {
				continue
			}
			if v == "" {
				return 0, fmt.Errorf("the scheduler's pod %s serves no explanations (--explain-address is empty)", pod.Name)
			}
			_, port, err := net.SplitHostPort(v)
			if err != nil {
				return 0, fmt.Errorf("the scheduler's pod %s: --explain-address %q: %w", pod.Name, v, err)
			}
			return strconv.Atoi(port)
		}
	}
	return explanation.DefaultPort, nil
}
