package k3s

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	helmv1 "github.com/k3s-io/helm-controller/pkg/apis/helm.cattle.io/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/installer/pkg/k3s/k3stest"
)

// converted is what k3s records for a server started with Ballast's drop-in.
var converted = []string{"--kube-scheduler-arg", "config=" + HostPaths("/").BootstrapSchedulerConfigInK3s()}

func node(name string, labels map[string]string, nodeArgs string) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	if nodeArgs != "" {
		n.Annotations = map[string]string{NodeArgsAnnotation: nodeArgs}
	}
	return n
}

func TestServers(t *testing.T) {
	cp := map[string]string{LabelControlPlane: "true", LabelMaster: "true"}
	etcdOnly := map[string]string{LabelEtcd: "true"}
	nodes := []corev1.Node{
		node("s3", cp, k3stest.NodeArgs(append([]string{"--cluster-init"}, converted...)...)),
		node("agent", nil, k3stest.NodeArgs()),
		node("s1", cp, k3stest.NodeArgs("--write-kubeconfig-mode", "644")),
		// Another kube-scheduler config than Ballast's: the embedded scheduler keeps its own profile.
		node("s2", cp, k3stest.NodeArgs("--kube-scheduler-arg", "config=/etc/mine.yaml")),
		// From config.yaml (value follows) and from the command line (no value).
		node("e1", etcdOnly, k3stest.NodeArgs("--disable-apiserver", "true", "--disable-scheduler", "true")),
		node("e2", etcdOnly, `["server","--disable-scheduler","--disable-apiserver"]`),
		node("e3", etcdOnly, k3stest.NodeArgs("--disable-scheduler", "false")),
		node("s4", cp, ""),
		node("s5", cp, "not json"),
	}
	want := []Server{
		{Node: "e1", Scheduler: SchedulerDisabled},
		{Node: "e2", Scheduler: SchedulerDisabled},
		{Node: "e3", Scheduler: SchedulerDefault},
		{Node: "s1", Scheduler: SchedulerDefault},
		{Node: "s2", Scheduler: SchedulerDefault},
		{Node: "s3", Scheduler: SchedulerConverted},
		{Node: "s4", Scheduler: SchedulerUnknown, Detail: "no k3s.io/node-args annotation"},
		{Node: "s5", Scheduler: SchedulerUnknown, Detail: "k3s.io/node-args is not a JSON list of strings"},
	}
	if diff := cmp.Diff(want, Servers(nodes)); diff != "" {
		t.Errorf("Servers() (-want,+got):\n%s", diff)
	}
	err := Cluster{Servers: Servers(nodes)}.CheckServers()
	if err == nil || !strings.Contains(err.Error(), "s4 (no k3s.io/node-args annotation), s5") {
		t.Errorf("CheckServers() = %v, want s4 and s5 named", err)
	}
}

func TestConversionStepsRestartTheLeaseHolderLast(t *testing.T) {
	cl := Cluster{
		Servers: []Server{
			{Node: "a", Scheduler: SchedulerDefault},
			{Node: "b", Scheduler: SchedulerDefault},
			{Node: "c", Scheduler: SchedulerConverted},
			{Node: "d", Scheduler: SchedulerDefault},
			{Node: "e", Scheduler: SchedulerDisabled},
		},
		Local:  "b",
		Leader: "a",
	}
	steps := cl.ConversionSteps(true)
	if len(steps) != 2 {
		t.Fatalf("steps = %q", steps)
	}
	// a and d still need the drop-in; b (this host) has it written; c is done, e has no scheduler.
	if !strings.HasPrefix(steps[0], "on a, d (not converted): sudo ballast install --mode replaceDefault") {
		t.Errorf("first step = %q", steps[0])
	}
	if !strings.HasPrefix(steps[1], "restart k3s on b, d, a, one after another") || !strings.Contains(steps[1], "a goes last") {
		t.Errorf("second step = %q, want the lease holder a last", steps[1])
	}

	cl.Servers = []Server{{Node: "a", Scheduler: SchedulerConverted}, {Node: "b", Scheduler: SchedulerConverted}}
	if steps := cl.ConversionSteps(true); len(steps) != 0 {
		t.Errorf("every server converted, yet steps %q", steps)
	}

	cl.Servers = []Server{{Node: "a", Scheduler: SchedulerConverted}, {Node: "b", Scheduler: SchedulerConverted}, {Node: "d", Scheduler: SchedulerDefault}}
	steps = cl.RevertSteps("sudo ballast uninstall")
	want := []string{
		"on a (still converted): sudo ballast uninstall, which removes that server's drop-in",
		"restart k3s on b, a, one after another in this order: " + RestartCommand + "; a goes last because its embedded scheduler " +
			"holds the lease kube-system/kube-scheduler: while it is up no other embedded scheduler leads, so one scheduler serves " +
			"default-scheduler throughout; then `ballast status` shows every server not converted",
	}
	if diff := cmp.Diff(want, steps); diff != "" {
		t.Errorf("RevertSteps (-want,+got):\n%s", diff)
	}
}

func TestSchedulerLeader(t *testing.T) {
	ctx := context.Background()
	if got, err := SchedulerLeader(ctx, fake.NewClientset()); got != "" || err != nil {
		t.Errorf("no lease: %q, %v", got, err)
	}
	id := "S1_4a3f0c2e-9d1b-4c55-8e0a-2b7f6d1c9e33"
	lease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: SchedulerLeaseName, Namespace: SchedulerLeaseNamespace},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &id},
	}
	if got, err := SchedulerLeader(ctx, fake.NewClientset(lease)); got != "s1" || err != nil {
		t.Errorf("SchedulerLeader() = %q, %v; want s1", got, err)
	}
}

func TestLocalNodeNameReadsTheKubeletCertificate(t *testing.T) {
	root := k3stest.ServerRoot(t)
	k3stest.KubeletCert(t, root, "pi-server-2")
	got, err := LocalNodeName(HostPaths(root))
	if err != nil || got != "pi-server-2" {
		t.Errorf("LocalNodeName() = %q, %v; want pi-server-2", got, err)
	}
}

func TestManifestElsewhere(t *testing.T) {
	cl := Cluster{Servers: []Server{{Node: "s1"}, {Node: "s2"}}, Local: "s2"}
	if got := cl.ManifestElsewhere(); got != "" {
		t.Errorf("no HelmChart: %q", got)
	}
	for holder, want := range map[string]string{"s1": "s1", "s2": "", "gone": "", "": ""} {
		cl.Chart = chartOn(holder)
		if got := cl.ManifestElsewhere(); got != want {
			t.Errorf("HelmChart on %q: ManifestElsewhere() = %q, want %q", holder, got, want)
		}
	}
}

func chartOn(node string) *helmv1.HelmChart {
	hc := &helmv1.HelmChart{}
	if node != "" {
		hc.Annotations = map[string]string{ManifestNodeAnnotation: node}
	}
	return hc
}

// A helm-controller job pod goes to the preferred node when it can run
// there, and never to a node it cannot run on.
func TestFirstFit(t *testing.T) {
	readyNode := func(name string, taints ...corev1.Taint) corev1.Node {
		return corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelOSStable: "linux"}},
			Spec:       corev1.NodeSpec{Taints: taints},
			Status:     corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}},
		}
	}
	notReady := readyNode("not-ready")
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	cordoned := readyNode("cordoned")
	cordoned.Spec.Unschedulable = true
	windows := readyNode("windows")
	windows.Labels[corev1.LabelOSStable] = "windows"
	critical := corev1.Taint{Key: "CriticalAddonsOnly", Value: "true", Effect: corev1.TaintEffectNoExecute}
	pod := &corev1.Pod{Spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelOSStable: "linux"}}}
	logger := klog.Background()

	nodes := []corev1.Node{notReady, cordoned, windows, readyNode("tainted", critical), readyNode("worker")}
	if got := firstFit(logger, pod, nodes); got != "worker" {
		t.Errorf("firstFit() = %q, want worker, the only node the pod can run on", got)
	}
	pod.Spec.Tolerations = []corev1.Toleration{{Key: "CriticalAddonsOnly", Operator: corev1.TolerationOpExists}}
	if got := firstFit(logger, pod, nodes); got != "tainted" {
		t.Errorf("firstFit() with a toleration = %q, want tainted", got)
	}
	if got := firstFit(logger, pod, []corev1.Node{notReady, cordoned, windows}); got != "" {
		t.Errorf("firstFit() = %q where no node fits", got)
	}
}
