package integration

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/component-base/metrics/legacyregistry"

	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	"github.com/ballast-sched/ballast/scheduler/pkg/plugins"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/component-base/configz"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
	"k8s.io/kubernetes/cmd/kube-scheduler/app/options"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/core/usage"
	"github.com/ballast-sched/ballast/installer/pkg/helminstall"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
	"github.com/ballast-sched/ballast/installer/pkg/kubeconfig"
	"github.com/ballast-sched/ballast/scheduler/pkg/nodeload"
)

// TestHelmChartInstallsAndSchedules does what k3s does with the HelmChart
// `ballast install` writes: installs its chartContent with its valuesContent
// through the Helm SDK. All three Deployments must roll out, and a scheduler
// running with nothing but the chart's scheduler ServiceAccount permissions
// and the chart's scheduler configuration must place a pod that asks for
// ballast-scheduler.
func TestHelmChartInstallsAndSchedules(t *testing.T) {
	c, ctx := startCluster(t)
	for _, n := range []string{"node-a", "node-b"} {
		if _, err := c.AddNode(ctx, cluster.NodeSpec{Name: n, CPU: "4", Memory: "8Gi"}); err != nil {
			t.Fatal(err)
		}
	}
	// The cluster's own scheduler places Ballast's pods, as in second mode.
	if _, err := c.StartScheduler(ctx, "", nil); err != nil {
		t.Fatal(err)
	}

	// The HelmChart, exactly as `ballast install` writes it on a k3s server.
	p := k3s.HostPaths(t.TempDir())
	userValues := map[string]any{"descheduler": map[string]any{"dryRun": true}}
	if _, err := (k3s.Installer{Paths: p, Euid: func() int { return 0 }}).Install(ctx, k3s.InstallOptions{Values: userValues}); err != nil {
		t.Fatal(err)
	}
	content, err := readHelmChart(p.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	hc, archive, chrt, vals := content.hc, content.archive, content.chart, content.values

	ns := hc.Spec.TargetNamespace
	// The restricted Pod Security Standard, enforced by the API server's PodSecurity admission:
	// a pod of Ballast's that breaks it is never created and the install times out.
	_, err = c.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   ns,
		Labels: map[string]string{"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/enforce-version": "latest"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var progress []string
	rel, upgraded, err := helminstall.InstallOrUpgrade(ctx, helminstall.Options{
		Getter:      helmGetter(c, ns),
		Client:      c.Client,
		ReleaseName: hc.Name,
		Namespace:   ns,
		Values:      vals,
		Chart:       chrt,
		Timeout:     3 * time.Minute,
		Progress:    func(s string) { progress = append(progress, s) },
	})
	if err != nil {
		t.Fatalf("Helm install of the HelmChart's content: %v (progress: %v)", err, progress)
	}
	if upgraded || rel.Namespace != ns {
		t.Errorf("release %s in %s, upgraded=%t", rel.Name, rel.Namespace, upgraded)
	}
	for _, name := range []string{"ballast-load-watcher", "ballast-scheduler", "ballast-descheduler"} {
		d, err := c.Client.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !helminstall.Ready(d) {
			t.Errorf("Deployment %s not rolled out: %+v", name, d.Status)
		}
	}

	// A second install with the same values is an upgrade that changes nothing in the cluster.
	before := deploymentGenerations(t, ctx, c.Client, ns)
	_, upgraded, err = helminstall.InstallOrUpgrade(ctx, helminstall.Options{
		Getter: helmGetter(c, ns), Client: c.Client,
		ReleaseName: hc.Name, Namespace: ns, Values: vals, Chart: reload(t, archive), Timeout: 2 * time.Minute,
	})
	if err != nil || !upgraded {
		t.Fatalf("re-install: upgraded=%t err=%v", upgraded, err)
	}
	if after := deploymentGenerations(t, ctx, c.Client, ns); !equalMaps(before, after) {
		t.Errorf("re-install with the same values changed Deployments: %v -> %v", before, after)
	}

	runSchedulerAsItsServiceAccount(t, ctx, c, ns)
	checkLoadWatcherPermissions(t, ctx, c, ns)
	checkDeschedulerPermissions(t, ctx, c, ns)
	checkExternalKubeconfig(t, ctx, c, ns)
	checkStatusCommand(t, c, ns)
}

// checkStatusCommand runs `ballast status`: the components are ready, but the
// load-watcher pod is a stand-in that serves nothing, so usage is unavailable
// and the command must say so and fail.
func checkStatusCommand(t *testing.T, c *cluster.Cluster, ns string) {
	t.Helper()
	stdout, stderr, err := runCLI("status", "--kubeconfig", c.KubeconfigPath(), "--ballast-namespace", ns, "--timeout", "20s")
	if err == nil {
		t.Errorf("status succeeded without usage data:\n%s", stdout)
	}
	for _, want := range []string{"load-watcher  ready", "scheduler     ready", "descheduler   ready", "usage: unavailable",
		"namespace opt-in: on: new pods in namespaces matching ballast-sched.io/opt-in=true"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status output lacks %q:\n%s\n%s", want, stdout, stderr)
		}
	}
}

func reload(t *testing.T, archive []byte) *chart.Chart {
	t.Helper()
	chrt, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	return chrt
}

func deploymentGenerations(t *testing.T, ctx context.Context, client kubernetes.Interface, ns string) map[string]int64 {
	t.Helper()
	list, err := client.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, d := range list.Items {
		out[d.Name] = d.Generation
	}
	return out
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// runSchedulerAsItsServiceAccount starts kube-scheduler with Ballast's
// plugins, as ballast-scheduler does, from the chart's configuration (its
// profiles, plugins and plugin args; leader election on the chart's lease)
// and only the scheduler ServiceAccount's permissions, and checks it
// schedules a pod. Usage comes from a fixed snapshot: how plugins use it is
// the scheduler's tests' concern; here the chart's args must decode and
// validate, and RBAC must suffice.
func runSchedulerAsItsServiceAccount(t *testing.T, ctx context.Context, c *cluster.Cluster, ns string) {
	t.Helper()
	cm, err := c.Client.CoreV1().ConfigMaps(ns).Get(ctx, "ballast-scheduler", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := map[string]any{}
	if err := yaml.Unmarshal([]byte(cm.Data["config.yaml"]), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": serviceAccountKubeconfig(t, c, ns, "ballast-scheduler")}
	// kube-scheduler exits the process when it stops leading, which a test cannot allow;
	// checkLeaseAccess exercises the lease calls leader election makes instead.
	le, _ := cfg["leaderElection"].(map[string]any)
	checkLeaseAccess(t, ctx, c, ns, le["resourceName"].(string))
	cfg["leaderElection"] = map[string]any{"leaderElect": false}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/scheduler.yaml"
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}

	opts := options.NewOptions()
	opts.ConfigFile = path
	opts.SecureServing.BindPort = 0
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	configz.Delete("componentconfig")
	cc, sched, err := app.Setup(sctx, opts, func(r frameworkruntime.Registry) error {
		return r.Merge(plugins.NewRegistry(fixedUsage(ctx, c), plugins.Options{Registerer: legacyregistry.Registerer()}))
	})
	if err != nil {
		t.Fatalf("set up kube-scheduler with the chart's config: %v", err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = app.Run(sctx, cc, sched) }()
	t.Cleanup(func() { cancel(); <-done })

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "opted-in", Namespace: "default"},
		Spec: corev1.PodSpec{
			SchedulerName: "ballast-scheduler",
			Containers: []corev1.Container{{Name: "app", Image: "nginx", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")},
			}}},
		},
	}
	if _, err := c.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the opted-in pod to be bound by ballast-scheduler", 90*time.Second, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("default").Get(ctx, "opted-in", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Spec.NodeName != "", nil
	})
	checkNamespaceOptIn(t, ctx, c)
}

// checkNamespaceOptIn: the chart's MutatingAdmissionPolicy gives new pods of
// a labelled namespace Ballast's schedulerName, and Ballast places them;
// pods elsewhere, DaemonSet pods and pods naming a scheduler keep theirs.
func checkNamespaceOptIn(t *testing.T, ctx context.Context, c *cluster.Cluster) {
	t.Helper()
	for name, labels := range map[string]map[string]string{"media": {"ballast-sched.io/opt-in": "true"}, "elsewhere": nil} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
		if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pod := func(name, schedulerName string, owners ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: owners},
			Spec: corev1.PodSpec{SchedulerName: schedulerName, Containers: []corev1.Container{{Name: "app", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m")}}}}},
		}
	}
	// The API server loads a new policy asynchronously: wait until a dry run shows it acting.
	waitFor(t, ctx, "the opt-in policy to act", 30*time.Second, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("media").Create(ctx, pod("probe", ""), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && p.Spec.SchedulerName == "ballast-scheduler", err
	})
	daemonSet := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "agent", UID: "0d5a7e2c-1111-4c1e-9a55-000000000001"}
	for _, tc := range []struct {
		ns, name, schedulerName string
		owners                  []metav1.OwnerReference
		want                    string
	}{
		{ns: "media", name: "web", want: "ballast-scheduler"},
		{ns: "media", name: "own-choice", schedulerName: "other-scheduler", want: "other-scheduler"},
		{ns: "media", name: "agent-x", owners: []metav1.OwnerReference{daemonSet}, want: "default-scheduler"},
		{ns: "elsewhere", name: "web", want: "default-scheduler"},
	} {
		got, err := c.Client.CoreV1().Pods(tc.ns).Create(ctx, pod(tc.name, tc.schedulerName, tc.owners...), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatalf("create pod %s/%s: %v", tc.ns, tc.name, err)
		}
		if got.Spec.SchedulerName != tc.want {
			t.Errorf("pod %s/%s: schedulerName %q, want %q", tc.ns, tc.name, got.Spec.SchedulerName, tc.want)
		}
	}
	if _, err := c.Client.CoreV1().Pods("media").Create(ctx, pod("web", ""), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "the namespace-opted-in pod to be bound by ballast-scheduler", 90*time.Second, func(ctx context.Context) (bool, error) {
		p, err := c.Client.CoreV1().Pods("media").Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return p.Spec.NodeName != "" && p.Spec.SchedulerName == "ballast-scheduler", nil
	})
}

// checkLeaseAccess makes the calls client-go's lease lock makes, as the
// scheduler's ServiceAccount: create, get and update its lease; and checks
// that other leases are out of reach.
func checkLeaseAccess(t *testing.T, ctx context.Context, c *cluster.Cluster, ns, lease string) {
	t.Helper()
	if lease != "ballast-scheduler" {
		t.Errorf("scheduler lease = %q, want ballast-scheduler", lease)
	}
	leases := kubernetes.NewForConfigOrDie(asServiceAccount(c, ns, "ballast-scheduler")).CoordinationV1().Leases(ns)
	holder := "ballast-scheduler-0"
	if _, err := leases.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: lease, Namespace: ns},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("scheduler cannot create its lease: %v", err)
	}
	got, err := leases.Get(ctx, lease, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("scheduler cannot read its lease: %v", err)
	}
	if _, err := leases.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Errorf("scheduler cannot renew its lease: %v", err)
	}
	if _, err := leases.Get(ctx, "kube-scheduler", metav1.GetOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("scheduler reading another component's lease: err = %v, want Forbidden", err)
	}
	other := kubernetes.NewForConfigOrDie(asServiceAccount(c, ns, "ballast-scheduler")).CoordinationV1().Leases("kube-system")
	if _, err := other.Create(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kube-scheduler"}}, metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("scheduler creating a lease in kube-system: err = %v, want Forbidden", err)
	}
}

// checkLoadWatcherPermissions: load-watcher reads nodes and node metrics, nothing else.
func checkLoadWatcherPermissions(t *testing.T, ctx context.Context, c *cluster.Cluster, ns string) {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(asServiceAccount(c, ns, "ballast-load-watcher"))
	if _, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("load-watcher cannot list nodes: %v", err)
	}
	if _, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("load-watcher listing pods: err = %v, want Forbidden", err)
	}
	if _, err := client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("load-watcher listing secrets: err = %v, want Forbidden", err)
	}
}

// checkDeschedulerPermissions: the descheduler evicts through the eviction API and cannot delete pods.
func checkDeschedulerPermissions(t *testing.T, ctx context.Context, c *cluster.Cluster, ns string) {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(asServiceAccount(c, ns, "ballast-descheduler"))
	if _, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("descheduler cannot list pods: %v", err)
	}
	// The descheduler waits for every informer it starts, the claims' too,
	// before its first cycle.
	if _, err := client.CoreV1().PersistentVolumeClaims("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("descheduler cannot list persistentvolumeclaims: %v", err)
	}
	if w, err := client.CoreV1().PersistentVolumeClaims("").Watch(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("descheduler cannot watch persistentvolumeclaims: %v", err)
	} else {
		w.Stop()
	}
	err := client.PolicyV1().Evictions("default").Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "opted-in", Namespace: "default"}})
	if err != nil && !apierrors.IsTooManyRequests(err) {
		t.Errorf("descheduler cannot evict: %v", err)
	}
	err = client.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("descheduler deleting pods: err = %v, want Forbidden", err)
	}
}

// checkExternalKubeconfig: the kubeconfig for a component run outside the
// cluster carries its own ServiceAccount's token, lives in a Secret, and
// grants exactly the component's permissions.
func checkExternalKubeconfig(t *testing.T, ctx context.Context, c *cluster.Cluster, ns string) {
	t.Helper()
	ca := c.RestConfig.CAData
	if len(ca) == 0 {
		var err error
		if ca, err = os.ReadFile(c.RestConfig.CAFile); err != nil {
			t.Fatal(err)
		}
	}
	g, err := kubeconfig.Generate(ctx, kubeconfig.Options{
		Client: c.Client, Namespace: ns, ReleaseName: "ballast", Component: "load-watcher",
		Server: c.RestConfig.Host, CAData: ca, TLSServerName: c.RestConfig.ServerName, Duration: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := kubeconfig.StoreSecret(ctx, c.Client, ns, "ballast-load-watcher-kubeconfig", "ballast", "load-watcher", g); err != nil {
		t.Fatal(err)
	}
	secret, err := c.Client.CoreV1().Secrets(ns).Get(ctx, "ballast-load-watcher-kubeconfig", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := secret.Data[kubeconfig.SecretKey]
	if c.RestConfig.BearerToken != "" && bytes.Contains(stored, []byte(c.RestConfig.BearerToken)) {
		t.Fatal("the kubeconfig carries the admin token")
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(stored)
	if err != nil {
		t.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(cfg)
	// The API server's authorizer learns a new binding from its informers:
	// a moment may pass before it grants what the binding says.
	var listErr error
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		_, listErr = client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return listErr == nil, nil
	}); err != nil {
		t.Errorf("external load-watcher cannot list nodes: %v", listErr)
	}
	if _, err := client.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("external load-watcher listing pods: err = %v, want Forbidden", err)
	}
	cms, err := c.Client.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cm := range cms.Items {
		for k, v := range cm.Data {
			if bytes.Contains([]byte(v), []byte("kind: Config")) {
				t.Errorf("ConfigMap %s key %s holds a kubeconfig", cm.Name, k)
			}
		}
	}
}

// fixedUsage is a usage source reporting every node of c at 20 % cpu and
// memory, sampled now.
func fixedUsage(ctx context.Context, c *cluster.Cluster) plugins.SourceFactory {
	return func(context.Context, fwk.Handle) (nodeload.Source, error) {
		nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		snap := &usage.Snapshot{Time: time.Now(), Source: "test", Nodes: map[string]usage.NodeUsage{}}
		for _, n := range nodes.Items {
			stats := usage.Stats{Avg: 20, Max: 20, P95: 20, Latest: 20, Samples: 4}
			windows := map[usage.Window]map[usage.Resource]usage.Stats{}
			for _, w := range usage.DefaultWindows {
				windows[w] = map[usage.Resource]usage.Stats{usage.CPU: stats, usage.Memory: stats}
			}
			snap.Nodes[n.Name] = usage.NodeUsage{Node: n.Name, SampleTime: snap.Time, Windows: windows}
		}
		return staticSource{snap}, nil
	}
}

type staticSource struct{ snap *usage.Snapshot }

func (s staticSource) Snapshot() *usage.Snapshot { return s.snap }
