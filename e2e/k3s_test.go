//go:build e2e

package e2e_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/google/go-containerregistry/pkg/name"
	"helm.sh/helm/v3/pkg/storage/driver"

	"github.com/ballast-sched/ballast/charts/values"
	"github.com/ballast-sched/ballast/e2e/pkg/helmjob"
	"github.com/ballast-sched/ballast/e2e/pkg/k3sserver"
	"github.com/ballast-sched/ballast/e2e/pkg/lane"
	"github.com/ballast-sched/ballast/installer/pkg/airgap"
	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// klipperHelmImage is the lane's image for helm-controller's Jobs, which
// the k3s server is told to use as k3s is with --helm-job-image.
const klipperHelmImage = "ballast.local/e2e/klipper-helm:e2e"

var addonResource = schema.GroupVersionResource{Group: "k3s.cattle.io", Version: "v1", Resource: "addons"}

// TestK3sJourney is Ballast's first use on a k3s server, as a user of a
// checkout does it: `make images`, then `sudo ballast install --images
// _output/images` with nothing else. The lane is a k3s server (docs/e2e.md
// says which parts are k3s's own and which stand in): k3s's deploy
// controller applies the HelmChart the CLI writes, k3s's helm-controller
// installs it with its Job, k3s imports the images archive the CLI places.
// Then a namespace opts in, an upgrade keeps the values, replaceDefault with a
// k3s restart makes Ballast schedule pods that name no scheduler, and
// uninstall with another restart gives k3s its scheduler back and leaves
// nothing.
func TestK3sJourney(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	env := loadEnv(t)
	// Ballast's archive comes through `ballast install --images`; the
	// lane's own images are k3s's air-gap images.
	laneImages := env.laneImages()
	imagesDir := ""
	for _, img := range env.images {
		if strings.HasPrefix(filepath.Base(img), "ballast-images-") {
			imagesDir = filepath.Dir(img)
		}
	}
	if imagesDir == "" {
		t.Fatal("BALLAST_E2E_IMAGES names no ballast-images-linux-<arch>.tar (make images)")
	}

	start := time.Now()
	l, err := lane.Start(ctx, lane.Options{BinDir: env.bin, Images: laneImages, Addons: env.addons, KeepDir: env.keep,
		K3s: true, K3sArgs: []string{"--helm-job-image=" + klipperHelmImage}})
	if err != nil {
		t.Fatalf("starting the k3s lane: %v", err)
	}
	t.Cleanup(l.Stop)
	t.Logf("k3s lane up in %s (dir %s)", time.Since(start).Round(time.Second), l.Dir)
	figures := &figures{}
	defer figures.report(t, strings.TrimSuffix(env.figures, ".md")+"-k3s.md")
	dyn, err := dynamic.NewForConfig(l.Config)
	if err != nil {
		t.Fatal(err)
	}

	// What `sudo ballast …` runs on the server: no flag says where k3s is,
	// and no kubeconfig but the one k3s writes.
	ballast := func(args ...string) (string, error) {
		cmd := l.OnServer(ctx, append([]string{env.ballast}, args...)...)
		cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "KUBECONFIG=") }),
			"HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	t.Run("install detects k3s and waits until helm-controller's Job has deployed Ballast from the images archive", func(t *testing.T) {
		begin := time.Now()
		out, err := ballast("install", "--images", imagesDir)
		figures.installToReady = time.Since(begin)
		if err != nil {
			t.Fatalf("ballast install: %v\n%s\n%s", err, out, describeNamespace(ctx, l.Client, ballastNamespace))
		}
		t.Logf("ballast install (%s):\n%s", figures.installToReady.Round(time.Second), out)
		for _, want := range []string{
			"Wrote " + k3sserver.ManifestsDir + "/ballast.yaml",
			"Placed " + k3sserver.ImagesDir + "/" + airgap.ArchiveName(nodeArch(ctx, t, l.Client)),
			"helm-controller deployed Ballast",
			"Ballast is ready in namespace " + ballastNamespace,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("ballast install does not say %q", want)
			}
		}
		// Ready when install returned, not later.
		checkComponents(ctx, t, l.Client)
		hc, err := k3s.GetHelmChart(ctx, dyn)
		if err != nil || hc == nil {
			t.Fatalf("HelmChart %s/%s: %v", k3s.HelmChartNamespace, k3s.HelmChartName, err)
		}
		if got := hc.Annotations[k3s.ManifestNodeAnnotation]; got != lane.NodeName {
			t.Errorf("the HelmChart says its manifest is on node %q, want %s (from k3s's kubelet certificate)", got, lane.NodeName)
		}
		checkHelmJob(ctx, t, l.Client, k3s.InstallJobName)
		checkReleaseLabelled(ctx, t, l.Client, 1)
		// The pods run the images of the archive, imported by k3s.
		pods, err := l.Client.CoreV1().Pods(ballastNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		archive, err := airgap.Read(filepath.Join(imagesDir, airgap.ArchiveName(nodeArch(ctx, t, l.Client))))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			for _, c := range p.Spec.Containers {
				if !slices.ContainsFunc(archive.Tags, func(tag name.Tag) bool { return tag.String() == c.Image }) {
					t.Errorf("pod %s runs image %s, which is not in the archive (%v)", p.Name, c.Image, archive.Tags)
				}
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}

	t.Run("a namespace opted in by label gets Ballast's scheduler", func(t *testing.T) {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "media", Labels: map[string]string{"ballast-sched.io/opt-in": "true"}}}
		if _, err := l.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		d := deployment("jellyfin", 1, "", "10Mi")
		d.Namespace = "media"
		if _, err := l.Client.AppsV1().Deployments("media").Create(ctx, d, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods := waitPodsIn(ctx, t, l.Client, "media", "app=jellyfin", 1, func(p corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
		if got := pods[0].Spec.SchedulerName; got != ballastScheduler {
			t.Errorf("opted-in pod has schedulerName %q, want %s", got, ballastScheduler)
		}
		if by := boundBy(ctx, t, l.Client, pods[0]); !byBallast(by) {
			t.Errorf("opted-in pod was bound by %q, want Ballast's scheduler", by)
		}
	})

	t.Run("install --set upgrades through helm-controller and keeps the earlier values", func(t *testing.T) {
		out, err := ballast("install", "--set", "descheduler.deschedulingInterval=10m")
		if err != nil {
			t.Fatalf("ballast install --set: %v\n%s", err, out)
		}
		t.Logf("ballast install --set:\n%s", out)
		if !strings.Contains(out, "Upgrade changes these values of the last install (mode second)") ||
			!strings.Contains(out, "descheduler.deschedulingInterval: 10m") || !strings.Contains(out, "Ballast is ready") {
			t.Errorf("upgrade output does not show the change, the mode kept and Ballast ready")
		}
		rel := checkReleaseLabelled(ctx, t, l.Client, 2)
		cfg := releaseValues(ctx, t, l.Client, rel)
		if values.Lookup(cfg, "descheduler", "deschedulingInterval") != "10m" || values.Lookup(cfg, "global", "image", "tag") == nil {
			t.Errorf("revision %d values %v: want the new interval and the archive's image tag kept", rel, cfg)
		}
	})

	// Idle as on the Helm path: the components have run two minutes.
	waitRunningFor(ctx, t, l.Client, ballastNamespace, 2*time.Minute)
	figures.memory = containerMemory(ctx, t, l)

	t.Run("replaceDefault and a k3s restart: Ballast binds a pod that names no scheduler", func(t *testing.T) {
		out, err := ballast("install", "--mode", "replaceDefault")
		if err != nil {
			t.Fatalf("ballast install --mode replaceDefault: %v\n%s", err, out)
		}
		t.Logf("ballast install --mode replaceDefault:\n%s", out)
		if !strings.Contains(out, "restart k3s") {
			t.Errorf("install does not ask for the k3s restart")
		}
		if _, err := os.Stat(l.K3sPath(k3sserver.ConfigFile + ".d/90-ballast-scheduler.yaml")); err != nil {
			t.Fatalf("no scheduler drop-in: %v", err)
		}
		if err := l.RestartK3s(ctx); err != nil {
			t.Fatalf("restarting k3s: %v", err)
		}
		// k3s's scheduler now serves only ballast-bootstrap, which places
		// Ballast's own pods.
		if err := l.WaitDeploymentsAvailable(ctx, ballastNamespace, 4*time.Minute); err != nil {
			t.Fatalf("%v\n%s", err, describeNamespace(ctx, l.Client, ballastNamespace))
		}
		out, err = ballast("status")
		t.Logf("ballast status:\n%s", out)
		if !strings.Contains(out, "converted: drop-in in effect") {
			t.Errorf("status does not show this server converted (err %v)", err)
		}
		if _, err := l.Client.AppsV1().Deployments("default").Create(ctx, deployment("plain", 1, "", "10Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods := waitPods(ctx, t, l.Client, "app=plain", 1, func(p corev1.Pod) bool { return p.Spec.NodeName != "" })
		if by := boundBy(ctx, t, l.Client, pods[0]); !byBallast(by) || !strings.HasPrefix(by, "default-scheduler-") {
			t.Errorf("a pod naming no scheduler was bound by %q, want Ballast's scheduler serving default-scheduler", by)
		}
	})

	t.Run("uninstall gives k3s its scheduler back and leaves nothing", func(t *testing.T) {
		if out, err := ballast("kubeconfig", "load-watcher"); err != nil {
			t.Fatalf("ballast kubeconfig: %v\n%s", err, out)
		}
		out, err := ballast("uninstall")
		if err != nil {
			t.Fatalf("ballast uninstall: %v\n%s", err, out)
		}
		t.Logf("ballast uninstall:\n%s", out)
		if !strings.Contains(out, "Removed the k3s scheduler drop-in") || !strings.Contains(out, "restart k3s") {
			t.Errorf("uninstall does not remove the drop-in and ask for the restart")
		}
		if err := l.RestartK3s(ctx); err != nil {
			t.Fatalf("restarting k3s: %v", err)
		}
		if _, err := l.Client.AppsV1().Deployments("default").Create(ctx, deployment("after", 1, "", "10Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pods := waitPods(ctx, t, l.Client, "app=after", 1, func(p corev1.Pod) bool { return p.Spec.NodeName != "" })
		if by := boundBy(ctx, t, l.Client, pods[0]); by != "default-scheduler-"+lane.NodeName {
			t.Errorf("after uninstall a pod naming no scheduler was bound by %q, want k3s's own on %s", by, lane.NodeName)
		}
		left := waitNothingLeft(ctx, t, l)
		left = append(left, k3sLeftovers(ctx, t, l, dyn)...)
		if len(left) > 0 {
			t.Errorf("left after uninstall: %s", strings.Join(left, ", "))
		}
	})
}

// waitRunningFor waits until every pod of namespace has run for d.
func waitRunningFor(ctx context.Context, t *testing.T, c kubernetes.Interface, namespace string, d time.Duration) {
	t.Helper()
	poll(ctx, t, fmt.Sprintf("the pods of %s to run for %s", namespace, d), d+3*time.Minute, func(ctx context.Context) (bool, string) {
		pods, err := c.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		for _, p := range pods.Items {
			if p.Status.StartTime == nil || time.Since(p.Status.StartTime.Time) < d {
				return false, p.Name + " started less than " + d.String() + " ago"
			}
		}
		return true, ""
	})
}

// nodeArch is the lane node's architecture, as the node reports it.
func nodeArch(ctx context.Context, t *testing.T, c kubernetes.Interface) string {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(ctx, lane.NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n.Status.NodeInfo.Architecture
}

// checkHelmJob checks that helm-controller ran a Job of the lane's image
// that succeeds. (The release is deployed, and install returns, a moment
// before the Job's pod has ended and the Job controller has counted it.)
func checkHelmJob(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	poll(ctx, t, "helm-controller's Job "+name+" to succeed", time.Minute, func(ctx context.Context) (bool, string) {
		job, err := c.BatchV1().Jobs(k3s.HelmChartNamespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if got := job.Spec.Template.Spec.Containers[0].Image; got != klipperHelmImage {
			t.Fatalf("Job %s runs image %s, want %s (--helm-job-image)", name, got, klipperHelmImage)
		}
		return job.Status.Succeeded > 0, fmt.Sprintf("%+v", job.Status)
	})
}

// checkReleaseLabelled checks that the release's newest revision is the
// given one, deployed, and labelled with the configuration hash
// helm-controller expects, and returns it.
func checkReleaseLabelled(ctx context.Context, t *testing.T, c kubernetes.Interface, revision int) int {
	t.Helper()
	secrets, err := c.CoreV1().Secrets(ballastNamespace).List(ctx, metav1.ListOptions{
		LabelSelector: fmt.Sprintf("owner=helm,name=%s,version=%d", k3s.HelmChartName, revision)})
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets.Items) != 1 {
		t.Fatalf("release %s revision %d: %d records, want one", k3s.HelmChartName, revision, len(secrets.Items))
	}
	l := secrets.Items[0].Labels
	if l["status"] != "deployed" || l[helmjob.ConfigHashLabel] == "" {
		t.Errorf("release revision %d labels %v: want deployed and labelled %s", revision, l, helmjob.ConfigHashLabel)
	}
	return revision
}

// releaseValues reads the values a revision of the release was installed
// with, from the Helm SDK's record of it.
func releaseValues(ctx context.Context, t *testing.T, c kubernetes.Interface, revision int) map[string]any {
	t.Helper()
	rel, err := driver.NewSecrets(c.CoreV1().Secrets(ballastNamespace)).Get(fmt.Sprintf("sh.helm.release.v1.%s.v%d", k3s.HelmChartName, revision))
	if err != nil {
		t.Fatalf("release %s revision %d: %v", k3s.HelmChartName, revision, err)
	}
	return rel.Config
}

// boundBy names the scheduler instance whose Scheduled event bound pod,
// "<profile>-<host name>": Ballast's scheduler runs in a pod named after it,
// k3s's on the server.
func boundBy(ctx context.Context, t *testing.T, c kubernetes.Interface, pod corev1.Pod) string {
	t.Helper()
	var by string
	poll(ctx, t, "the Scheduled event of "+pod.Name, time.Minute, func(ctx context.Context) (bool, string) {
		ev, err := c.EventsV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "regarding.name=" + pod.Name + ",reason=Scheduled"})
		if err != nil || len(ev.Items) == 0 {
			return false, fmt.Sprint(err)
		}
		by = ev.Items[0].ReportingInstance
		return true, ""
	})
	return by
}

// byBallast reports whether a scheduler instance is Ballast's: its host is
// a pod of the ballast-scheduler Deployment.
func byBallast(instance string) bool { return strings.Contains(instance, "-"+ballastScheduler+"-") }

// k3sLeftovers lists what Ballast's install left on the k3s server: the
// HelmChart, k3s's record of its file, helm-controller's Jobs and what they
// ran with, and Ballast's host files.
func k3sLeftovers(ctx context.Context, t *testing.T, l *lane.Lane, dyn dynamic.Interface) []string {
	t.Helper()
	var left []string
	gone := func(what string, err error) {
		if err == nil {
			left = append(left, what)
		} else if !apierrors.IsNotFound(err) {
			t.Errorf("reading %s: %v", what, err)
		}
	}
	var err error
	poll(ctx, t, "helm-controller to remove what its Jobs ran with", 2*time.Minute, func(ctx context.Context) (bool, string) {
		left = left[:0]
		_, err = dyn.Resource(k3s.HelmChartResource).Namespace(k3s.HelmChartNamespace).Get(ctx, k3s.HelmChartName, metav1.GetOptions{})
		gone("HelmChart", err)
		_, err = dyn.Resource(addonResource).Namespace(k3s.HelmChartNamespace).Get(ctx, k3s.HelmChartName, metav1.GetOptions{})
		gone("Addon", err)
		for _, j := range []string{k3s.InstallJobName, "helm-delete-" + k3s.HelmChartName} {
			_, err = l.Client.BatchV1().Jobs(k3s.HelmChartNamespace).Get(ctx, j, metav1.GetOptions{})
			gone("Job/"+j, err)
		}
		_, err = l.Client.CoreV1().ServiceAccounts(k3s.HelmChartNamespace).Get(ctx, "helm-"+k3s.HelmChartName, metav1.GetOptions{})
		gone("ServiceAccount/helm-"+k3s.HelmChartName, err)
		_, err = l.Client.RbacV1().ClusterRoleBindings().Get(ctx, "helm-kube-system-"+k3s.HelmChartName, metav1.GetOptions{})
		gone("ClusterRoleBinding/helm-kube-system-"+k3s.HelmChartName, err)
		_, err = l.Client.CoreV1().Secrets(k3s.HelmChartNamespace).Get(ctx, "chart-values-"+k3s.HelmChartName, metav1.GetOptions{})
		gone("Secret/chart-values-"+k3s.HelmChartName, err)
		_, err = l.Client.CoreV1().ConfigMaps(k3s.HelmChartNamespace).Get(ctx, "chart-content-"+k3s.HelmChartName, metav1.GetOptions{})
		gone("ConfigMap/chart-content-"+k3s.HelmChartName, err)
		pods, err := l.Client.CoreV1().Pods(k3s.HelmChartNamespace).List(ctx, metav1.ListOptions{LabelSelector: "helmcharts.helm.cattle.io/chart=" + k3s.HelmChartName})
		if err == nil {
			for _, p := range pods.Items {
				left = append(left, "Pod/"+p.Name)
			}
		}
		creds, err := l.Client.CoreV1().Secrets("").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=ballast-cli"})
		if err == nil {
			for _, s := range creds.Items {
				left = append(left, "Secret/"+s.Namespace+"/"+s.Name)
			}
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	for _, f := range []string{
		k3sserver.ManifestsDir + "/ballast.yaml",
		k3sserver.ConfigFile + ".d/90-ballast-scheduler.yaml",
		k3sserver.DataDir + "/server/ballast",
		k3sserver.ImagesDir + "/" + airgap.ArchiveName(nodeArch(ctx, t, l.Client)),
	} {
		if _, err := os.Stat(l.K3sPath(f)); err == nil {
			left = append(left, f)
		}
	}
	return left
}
