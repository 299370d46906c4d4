package helmjob_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	helmv1 "github.com/k3s-io/helm-controller/pkg/apis/helm.cattle.io/v1"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/release"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/klog/v2/ktesting"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/e2e/pkg/helmjob"
	"github.com/ballast-sched/ballast/e2e/pkg/k3sserver"
	"github.com/ballast-sched/ballast/images/pkg/build"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

const jobImage = "ballast.local/e2e/klipper-helm:e2e"

var (
	helmChartGVR       = k3s.HelmChartResource
	helmChartConfigGVR = schema.GroupVersionResource{Group: "helm.cattle.io", Version: "v1", Resource: "helmchartconfigs"}
)

// TestJobContract runs the real helm-controller, registered as a k3s server
// registers it, on the HelmChart `ballast install` writes (with a
// HelmChartConfig beside it), takes the install Job it creates, and runs this
// program as the kubelet would run it in that Job: with the Job's
// environment and arguments, its volumes filled from the objects
// helm-controller made, only the paths it mounts writable, and the Job's
// ServiceAccount's permissions. The release must come out as helm-controller
// expects it. Then the same for the delete Job. A helm-controller version
// that changes what it hands the Job fails here.
func TestJobContract(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane")
	}
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatalf("start cluster: %v", err)
	}
	_, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := k3sserver.CreateCRDs(ctx, c.RestConfig); err != nil {
		t.Fatal(err)
	}
	hc := k3sserver.HelmController{JobImage: jobImage, APIServerPort: 6443, NodeName: "server-1"}
	if err := hc.Start(ctx, c.RestConfig); err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.RestConfig)
	if err != nil {
		t.Fatal(err)
	}

	// What `sudo ballast install --set descheduler.dryRun=true` writes, and
	// a HelmChartConfig that overrides one of its values.
	archive, err := charts.Archive()
	if err != nil {
		t.Fatal(err)
	}
	chartValues := map[string]any{"descheduler": map[string]any{"dryRun": true, "deschedulingInterval": "10m"}}
	chart, err := k3s.NewHelmChart(archive, chartValues, charts.DefaultNamespace)
	if err != nil {
		t.Fatal(err)
	}
	config := &helmv1.HelmChartConfig{
		TypeMeta:   metav1.TypeMeta{APIVersion: helmv1.SchemeGroupVersion.String(), Kind: "HelmChartConfig"},
		ObjectMeta: metav1.ObjectMeta{Name: k3s.HelmChartName, Namespace: k3s.HelmChartNamespace},
		Spec:       helmv1.HelmChartConfigSpec{ValuesContent: "descheduler:\n  deschedulingInterval: 3m\n"},
	}
	create(ctx, t, dyn, helmChartConfigGVR, config)
	create(ctx, t, dyn, helmChartGVR, chart)

	job := waitJob(ctx, t, c, "helm-install-"+k3s.HelmChartName)
	pod := job.Spec.Template.Spec
	checkPodContract(t, pod)

	// Run the program as the pod would; a second run of the same Job finds
	// the release past the revision it was made for and does nothing.
	env, out := runJob(ctx, t, c, pod)
	t.Logf("install job: %s", out)
	if !strings.HasPrefix(out, "Installed chart ballast") {
		t.Fatalf("install job did %q, want an install", out)
	}
	if _, out = runJob(ctx, t, c, pod); !strings.Contains(out, "nothing done") {
		t.Errorf("second run of the install job did %q, want nothing", out)
	}

	// The release as helm-controller reads it: deployed, labelled with the
	// hash of this Job's configuration, with the HelmChartConfig's values
	// over the HelmChart's.
	rel := release1(ctx, t, c)
	if rel.Info.Status != release.StatusDeployed {
		t.Errorf("release is %s, want deployed", rel.Info.Status)
	}
	want := map[string]any{"descheduler": map[string]any{"dryRun": true, "deschedulingInterval": "3m"}}
	if diff := cmp.Diff(want, rel.Config); diff != "" {
		t.Errorf("release values (-want,+got):\n%s", diff)
	}
	secrets, err := c.Client.CoreV1().Secrets(charts.DefaultNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: "owner=helm,name=" + k3s.HelmChartName, FieldSelector: "type=helm.sh/release.v1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 || secrets.Items[0].Labels[helmjob.ConfigHashLabel] != env["CONFIG_HASH"] {
		t.Errorf("release secrets %v: want one labelled %s=%s", secretLabels(secrets.Items), helmjob.ConfigHashLabel, env["CONFIG_HASH"])
	}

	// Deleting the HelmChart makes helm-controller create its delete Job.
	if err := dyn.Resource(helmChartGVR).Namespace(k3s.HelmChartNamespace).Delete(ctx, k3s.HelmChartName, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	del := waitJob(ctx, t, c, "helm-delete-"+k3s.HelmChartName)
	checkPodContract(t, del.Spec.Template.Spec)
	if _, out = runJob(ctx, t, c, del.Spec.Template.Spec); out != "Uninstalled chart" {
		t.Errorf("delete job did %q, want the uninstall", out)
	}
	left, err := c.Client.CoreV1().Secrets(charts.DefaultNamespace).List(ctx, metav1.ListOptions{LabelSelector: "owner=helm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(left.Items) > 0 {
		t.Errorf("release records left after the delete job: %v", secretLabels(left.Items))
	}
}

// checkPodContract holds helm-controller's pod to what the program and its
// image need: one container whose every environment variable is known to
// the program and given as a value, whose required ones are set, whose
// arguments parse, whose volumes are those the program reads at the paths it
// reads them, whose writes go to writable mounts on a read-only root, and a
// pod security context the image satisfies.
func checkPodContract(t *testing.T, pod corev1.PodSpec) {
	t.Helper()
	if len(pod.Containers) != 1 || len(pod.InitContainers) > 0 {
		t.Fatalf("job pod has %d containers and %d init containers, want one container", len(pod.Containers), len(pod.InitContainers))
	}
	ctr := pod.Containers[0]
	if ctr.Image != jobImage {
		t.Errorf("job image %q, want %q (k3s's --helm-job-image)", ctr.Image, jobImage)
	}
	if len(ctr.Command) > 0 {
		t.Errorf("job container overrides the entrypoint with %q", ctr.Command)
	}
	seen := map[string]bool{}
	for _, e := range ctr.Env {
		seen[e.Name] = true
		if _, known := helmjob.EnvVars[e.Name]; !known {
			t.Errorf("helm-controller sets %s=%q, which the program does not know (add it to helmjob.EnvVars)", e.Name, e.Value)
		}
		if e.ValueFrom != nil {
			t.Errorf("helm-controller takes %s from %+v; the program expects values", e.Name, e.ValueFrom)
		}
	}
	for name, v := range helmjob.EnvVars {
		if v.Required && !seen[name] {
			t.Errorf("helm-controller does not set %s, which the program needs", name)
		}
	}
	if _, err := helmjob.ParseArgs(ctr.Args); err != nil {
		t.Errorf("job arguments %q: %v", ctr.Args, err)
	}

	p := helmjob.DefaultPaths
	// What each mount must be, by path: the program reads Config and Chart.
	read := map[string]func(corev1.VolumeSource) bool{
		p.Config: func(v corev1.VolumeSource) bool { return v.Projected != nil || v.Secret != nil },
		p.Chart:  func(v corev1.VolumeSource) bool { return v.ConfigMap != nil },
	}
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	writable := map[string]bool{}
	for _, m := range ctr.VolumeMounts {
		src, ok := volumes[m.Name]
		if !ok {
			t.Errorf("mount %s names no volume %q", m.MountPath, m.Name)
			continue
		}
		if src.EmptyDir != nil && !m.ReadOnly {
			writable[m.MountPath] = true
		}
		if check, ok := read[m.MountPath]; ok && !check(src) {
			t.Errorf("mount %s is %+v, not what the program reads there", m.MountPath, src)
		}
		delete(read, m.MountPath)
	}
	// Only the install Job carries chart and values.
	if ctr.Args[0] == "install" {
		for path := range read {
			t.Errorf("job mounts nothing at %s, which the program reads", path)
		}
	}
	sc := ctr.SecurityContext
	if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Errorf("job container security context %+v: want a read-only root filesystem, as the program is built for", sc)
	}
	for _, w := range p.Writable() {
		if !slices.ContainsFunc(mapsKeys(writable), func(m string) bool { return w == m || strings.HasPrefix(w, m+"/") }) {
			t.Errorf("the program writes in %s, which no writable mount covers (writable: %v)", w, mapsKeys(writable))
		}
	}
	// runAsNonRoot without runAsUser: the kubelet runs the image's user,
	// which must be numeric and not root.
	if psc := pod.SecurityContext; psc != nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot && psc.RunAsUser == nil {
		uid, _, _ := strings.Cut(build.DefaultUser, ":")
		if uid == "" || uid == "0" || strings.Trim(uid, "0123456789") != "" {
			t.Errorf("image user %q is not a numeric non-root user, which runAsNonRoot needs", build.DefaultUser)
		}
	}
}

// runJob runs the program with the pod's environment and arguments, its
// volumes laid out under a fresh root as the kubelet would fill them, and the
// permissions of the pod's ServiceAccount. It returns the environment and
// what the program did.
func runJob(ctx context.Context, t *testing.T, c *cluster.Cluster, pod corev1.PodSpec) (map[string]string, string) {
	t.Helper()
	root := t.TempDir()
	ctr := pod.Containers[0]
	volumes := map[string]corev1.VolumeSource{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = v.VolumeSource
	}
	for _, m := range ctr.VolumeMounts {
		fillVolume(ctx, t, c, filepath.Join(root, m.MountPath), volumes[m.Name])
	}
	env := map[string]string{}
	for _, e := range ctr.Env {
		env[e.Name] = e.Value
	}
	e, err := helmjob.ReadEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	act, err := helmjob.ParseArgs(ctr.Args)
	if err != nil {
		t.Fatal(err)
	}
	paths := helmjob.DefaultPaths
	for _, p := range []*string{&paths.Config, &paths.Chart, &paths.CAFiles, &paths.Auth, &paths.Home, &paths.Tmp, &paths.TerminationLog} {
		*p = filepath.Join(root, *p)
	}
	settings := cli.New()
	settings.RepositoryCache = filepath.Join(paths.Home, ".cache", "helm", "repository")
	settings.RepositoryConfig = filepath.Join(paths.Home, ".config", "helm", "repositories.yaml")
	settings.RegistryConfig = filepath.Join(paths.Home, ".config", "helm", "registry", "config.json")
	job := helmjob.Job{Env: e, Action: act, Paths: paths, Settings: settings}

	ns := e.TargetNamespace
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig := c.KubeconfigPath()
	user := "system:serviceaccount:" + k3s.HelmChartNamespace + ":" + pod.ServiceAccountName
	flags.KubeConfig, flags.Namespace, flags.Impersonate = &kubeconfig, &ns, &user
	cfg := &action.Configuration{}
	if err := cfg.Init(cluster.WithVersion(flags), ns, e.Driver, t.Logf); err != nil {
		t.Fatal(err)
	}
	out, err := job.Run(ctx, cfg)
	if err != nil {
		t.Fatalf("job %s: %v", strings.Join(ctr.Args, " "), err)
	}
	return env, out
}

// fillVolume writes what the kubelet would mount from src at dir.
func fillVolume(ctx context.Context, t *testing.T, c *cluster.Cluster, dir string, src corev1.VolumeSource) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(data map[string][]byte, items []corev1.KeyToPath) {
		if len(items) == 0 {
			for k := range data {
				items = append(items, corev1.KeyToPath{Key: k, Path: k})
			}
		}
		for _, it := range items {
			if err := os.WriteFile(filepath.Join(dir, it.Path), data[it.Key], 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	secret := func(name string, items []corev1.KeyToPath, optional bool) {
		s, err := c.Client.CoreV1().Secrets(k3s.HelmChartNamespace).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) && optional {
			return
		}
		if err != nil {
			t.Fatalf("the job mounts secret %s: %v", name, err)
		}
		write(s.Data, items)
	}
	configMap := func(name string, items []corev1.KeyToPath) {
		cm, err := c.Client.CoreV1().ConfigMaps(k3s.HelmChartNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the job mounts config map %s: %v", name, err)
		}
		data := map[string][]byte{}
		for k, v := range cm.Data {
			data[k] = []byte(v)
		}
		write(data, items)
	}
	switch {
	case src.EmptyDir != nil:
	case src.Secret != nil:
		secret(src.Secret.SecretName, src.Secret.Items, src.Secret.Optional != nil && *src.Secret.Optional)
	case src.ConfigMap != nil:
		configMap(src.ConfigMap.Name, src.ConfigMap.Items)
	case src.Projected != nil:
		for _, s := range src.Projected.Sources {
			switch {
			case s.Secret != nil:
				secret(s.Secret.Name, s.Secret.Items, s.Secret.Optional != nil && *s.Secret.Optional)
			case s.ConfigMap != nil:
				configMap(s.ConfigMap.Name, s.ConfigMap.Items)
			default:
				t.Fatalf("projected volume source %+v is new to this test", s)
			}
		}
	default:
		t.Fatalf("volume %+v is new to this test", src)
	}
}

func create(ctx context.Context, t *testing.T, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj runtime.Object) {
	t.Helper()
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: raw}
	if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
	}
}

func waitJob(ctx context.Context, t *testing.T, c *cluster.Cluster, name string) *batchv1.Job {
	t.Helper()
	var job *batchv1.Job
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		j, err := c.Client.BatchV1().Jobs(k3s.HelmChartNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		job = j
		return true, nil
	})
	if err != nil {
		var seen []string
		if ev, err := c.Client.CoreV1().Events(k3s.HelmChartNamespace).List(ctx, metav1.ListOptions{}); err == nil {
			for _, e := range ev.Items {
				seen = append(seen, fmt.Sprintf("%s %s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message))
			}
		}
		t.Fatalf("helm-controller made no Job %s: %v; events: %s", name, err, strings.Join(seen, "; "))
	}
	return job
}

func release1(ctx context.Context, t *testing.T, c *cluster.Cluster) *release.Release {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	kubeconfig, ns := c.KubeconfigPath(), charts.DefaultNamespace
	flags.KubeConfig, flags.Namespace = &kubeconfig, &ns
	cfg := &action.Configuration{}
	if err := cfg.Init(cluster.WithVersion(flags), ns, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	rel, err := action.NewGet(cfg).Run(k3s.HelmChartName)
	if err != nil {
		t.Fatalf("release %s: %v", k3s.HelmChartName, err)
	}
	return rel
}

func secretLabels(items []corev1.Secret) string {
	var out []string
	for _, s := range items {
		l, _ := yaml.Marshal(s.Labels)
		out = append(out, fmt.Sprintf("%s %s", s.Name, strings.ReplaceAll(string(l), "\n", " ")))
	}
	return strings.Join(out, "; ")
}

func mapsKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
