// Package explain implements `ballast explain`: why a pod is where it is
// (or Pending), and how a node stands against every threshold.
package explain

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/core/cli"
	"github.com/ballast-sched/ballast/core/cli/kube"
	"github.com/ballast-sched/ballast/core/cli/log"
	"github.com/ballast-sched/ballast/core/moves"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/installer/pkg/cmd/ballast/installation"
	"github.com/ballast-sched/ballast/installer/pkg/health"
)

// NewCommand returns the explain command and its subcommands.
func NewCommand(logger *log.Logger, streams cli.IOStreams) *cobra.Command {
	return NewCommandWith(logger, streams, newReleaseScheduler)
}

// NewCommandWith returns the explain command, asking the scheduler newScheduler
// returns where it would place a pod.
func NewCommandWith(logger *log.Logger, streams cli.IOStreams, newScheduler NewScheduler) *cobra.Command {
	flags := &installation.Flags{}
	c := &cobra.Command{
		Use:   "explain",
		Short: "Say why a pod is where it is (or Pending), and how a node stands against Ballast's thresholds",
	}
	cli.RequireSubcommand(c)
	flags.AddFlags(c.PersistentFlags(), time.Minute, false)
	var podNamespace string
	pod := subcommand(flags, &cobra.Command{
		Use:   "pod [NAMESPACE/]NAME",
		Short: "Say where a pod is, where Ballast's scheduler would place it now and why not on every other node",
		Long: "explain pod asks the release's scheduler (its explain endpoint, through the API server's port-forward: it needs the\n" +
			"pods/portforward right in Ballast's namespace) to run the profile that places the pod, its own configuration, plugins\n" +
			"and usage, on the cluster as it is now: for every node, the filter that\n" +
			"rejects it and why, LoadAware's figures (usage, pods bound since the sample, the pod's estimate, the threshold)\n" +
			"and each score plugin's score. It lists the pod's events too: where the scheduler placed it, why it is Pending,\n" +
			"why the descheduler moved it. A pod is placed as if it were not bound yet; its own usage stays in its node's figures.\n" +
			"-n is the pod's namespace, as in kubectl; --ballast-namespace is Ballast's.",
		Example: "  ballast explain pod -n media web-6d4f9c-abcde\n" +
			"  ballast explain pod default/web-6d4f9c-abcde -o json",
	}, func(ctx context.Context, ref string) error {
		ns, name, err := podRef(ref, podNamespace, func() string { return flags.Kube.ContextNamespace(flags.Host.Paths().Kubeconfig()) })
		if err != nil {
			return err
		}
		return explainPod(ctx, logger, streams, flags, ns, name, newScheduler)
	})
	installation.AddObjectNamespaceFlag(pod.Flags(), &podNamespace, "pod")
	c.AddCommand(pod)
	node := subcommand(flags, &cobra.Command{
		Use:   "node NAME",
		Short: "Say how a node stands against the scheduler's and the descheduler's thresholds, and what moved off or onto it",
		Long: "explain node shows the node's usage in every window load-watcher keeps, the figure the scheduler judges it by against\n" +
			"its thresholds (over one, it gets no new pod) and the one the descheduler judges it by against its high and low\n" +
			"thresholds and the cluster's mean (hot: its pods move; cool: it may receive moved pods), the pods that would be\n" +
			"candidates while it is hot, and the descheduler's recent moves off and onto it with why and what came of them.",
		Example: "  ballast explain node pi-3\n  ballast explain node pi-3 -o yaml",
	}, func(ctx context.Context, name string) error { return explainNode(ctx, logger, streams, flags, name) })
	// A node has no namespace: -n stays what it was here, Ballast's.
	installation.AddNamespaceAlias(node.Flags(), &flags.Release)
	c.AddCommand(node)
	return c
}

// podRef is the namespace and name of the pod ref names: NAMESPACE/NAME,
// or NAME in -n's namespace, else in contextNamespace's.
func podRef(ref, namespace string, contextNamespace func() string) (string, string, error) {
	ns, name, qualified := strings.Cut(ref, "/")
	if !qualified {
		ns, name = namespace, ref
	}
	switch {
	case name == "" || strings.Contains(name, "/"):
		return "", "", fmt.Errorf("pod %q: want NAME or NAMESPACE/NAME", ref)
	case qualified && namespace != "" && namespace != ns:
		return "", "", fmt.Errorf("pod %s is in namespace %s, and -n says %s: give one of them", ref, ns, namespace)
	case ns == "":
		ns = contextNamespace()
	}
	return ns, name, nil
}

// subcommand completes c, a subcommand of one argument, to run explain
// within the flags' timeout.
func subcommand(flags *installation.Flags, c *cobra.Command, explain func(ctx context.Context, arg string) error) *cobra.Command {
	c.Args = cobra.ExactArgs(1)
	c.RunE = func(c *cobra.Command, args []string) error {
		ctx, cancel := context.WithTimeout(c.Context(), flags.Timeout)
		defer cancel()
		return explain(ctx, args[0])
	}
	return c
}

// installed is what an explanation reads of the cluster and of Ballast.
type installed struct {
	client     kubernetes.Interface
	restConfig *rest.Config
	// namespace and release are Ballast's.
	namespace, release string
	// schedulerConfig is the scheduler's KubeSchedulerConfiguration; nil
	// when the release runs no scheduler.
	schedulerConfig []byte
	// policy is the descheduler's policy; nil when it runs none.
	policy []byte
	// usage is what load-watcher serves, nil when it could not be read
	// (usageErr says why).
	usage    *health.Usage
	usageErr error
	// moves are the descheduler's recent moves, oldest first; movesErr
	// says why they could not be read.
	moves    []balance.Move
	movesErr error
	// plan is the descheduler's plan, nil when it keeps none.
	plan *moves.Rebalance
}

// connect reads the installation flags describe.
func connect(ctx context.Context, logger *log.Logger, flags *installation.Flags) (*installed, error) {
	getter := flags.Getter()
	clients, err := kube.Connect(ctx, getter)
	if err != nil {
		return nil, err
	}
	restConfig, err := getter.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	in := &installed{client: clients.Kube, restConfig: restConfig, namespace: flags.Namespace, release: flags.ReleaseName}
	if in.schedulerConfig, err = configMapKey(ctx, in.client, flags, "scheduler", "config.yaml"); err != nil {
		return nil, err
	}
	if in.policy, err = configMapKey(ctx, in.client, flags, "descheduler", "policy.yaml"); err != nil {
		return nil, err
	}
	in.moves, in.plan, in.movesErr = recentMoves(ctx, in.client, flags)
	lw, err := health.LoadWatcherOfRelease(logger, getter, flags.ReleaseName, flags.Namespace, flags.LoadWatcherPort)
	if err != nil {
		return nil, err
	}
	in.usage, _, in.usageErr = health.AskLoadWatcher(ctx, health.Options{Client: in.client, RestConfig: restConfig,
		Namespace: flags.Namespace, ReleaseName: flags.ReleaseName, LoadWatcher: lw})
	return in, nil
}

// configMapKey reads key of the ConfigMap of component; nil when the
// release has no such ConfigMap (the component is off).
func configMapKey(ctx context.Context, client kubernetes.Interface, flags *installation.Flags, component, key string) ([]byte, error) {
	name := charts.ComponentFullname(flags.ReleaseName, component)
	cm, err := client.CoreV1().ConfigMaps(flags.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the %s's configuration (ConfigMap %s/%s): %w", component, flags.Namespace, name, err)
	}
	return []byte(cm.Data[key]), nil
}

// recentMoves reads the moves and the plan the descheduler keeps in the
// cluster.
func recentMoves(ctx context.Context, client kubernetes.Interface, flags *installation.Flags) ([]balance.Move, *moves.Rebalance, error) {
	name := charts.ComponentFullname(flags.ReleaseName, "descheduler") + "-moves"
	cm, err := client.CoreV1().ConfigMaps(flags.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the descheduler's moves (ConfigMap %s/%s): %w", flags.Namespace, name, err)
	}
	data := []byte(cm.Data[moves.Key])
	ms, err := balance.DecodeMoves(data)
	if err != nil {
		return nil, nil, err
	}
	plan, err := balance.DecodePlan(data)
	return ms, plan, err
}

// MoveExplanation is one move of the descheduler, as explain shows it.
type MoveExplanation struct {
	balance.Move `json:",inline"`
	// Cooled says whether the source came down as the move expected, once
	// the replacement ran; empty until then.
	Cooled string `json:"cooled,omitempty"`
}

// cooledSlack is how many points above what a move expected its source may
// stay and still count as cooled as expected: usage moves by a point or two
// from sample to sample.
const cooledSlack = 2.0

// explainMoves returns the moves that match, with whether each did what it
// was expected to.
func explainMoves(moves []balance.Move, match func(balance.Move) bool) []MoveExplanation {
	var out []MoveExplanation
	for _, m := range moves {
		if !match(m) {
			continue
		}
		e := MoveExplanation{Move: m}
		if m.SourceAfter != nil && m.ExpectedSource != nil {
			verdict, figures := "as expected", []string(nil)
			for _, r := range usage.Resources {
				want, expected := m.ExpectedSource[r]
				got, measured := m.SourceAfter[r]
				if !expected || !measured {
					continue
				}
				figures = append(figures, fmt.Sprintf("%s %.1f%%, expected %.1f%%", r, got, want))
				if got > want+cooledSlack {
					verdict = "less than expected"
				}
			}
			e.Cooled = verdict + " (" + strings.Join(figures, "; ") + ")"
		}
		out = append(out, e)
	}
	return out
}

// Event is one event about an object, as explain lists them.
type Event struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	From    string    `json:"from"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
}

// eventsOf lists the events about the object of uid in namespace, oldest
// first.
func eventsOf(ctx context.Context, client kubernetes.Interface, namespace, kind, name string) ([]Event, error) {
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name}
	list, err := client.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
	if err != nil {
		return nil, fmt.Errorf("listing the events of %s %s: %w", kind, name, err)
	}
	out := make([]Event, 0, len(list.Items))
	for _, e := range list.Items {
		out = append(out, Event{Time: eventTime(e), Type: e.Type, Reason: e.Reason, From: source(e), Message: e.Message, Count: e.Count})
	}
	sortEvents(out)
	return out, nil
}

func eventTime(e corev1.Event) time.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp.Time
	case e.Series != nil:
		return e.Series.LastObservedTime.Time
	case !e.EventTime.IsZero():
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

func source(e corev1.Event) string {
	if e.ReportingController != "" {
		return e.ReportingController
	}
	return e.Source.Component
}
