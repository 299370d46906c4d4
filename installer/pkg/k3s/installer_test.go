package k3s

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
)

// fakeK3sServer lays out the files a k3s server has, under a temporary root.
func fakeK3sServer(t *testing.T) Paths {
	t.Helper()
	root := t.TempDir()
	p := HostPaths(root)
	for _, dir := range []string{p.ManifestsDir(), filepath.Join(root, "usr/local/bin"), filepath.Join(root, "etc/systemd/system")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for path, data := range map[string]string{
		"usr/local/bin/k3s":                                 "k3s binary",
		"etc/systemd/system/k3s.service":                    "[Service]\nExecStart=/usr/local/bin/k3s server\n",
		"var/lib/rancher/k3s/server/manifests/coredns.yaml": "# k3s's own manifest\n",
	} {
		if err := os.WriteFile(filepath.Join(root, path), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// tree lists every file under root with its content, to compare host states.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(root, path)
		files[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func root() func() int { return func() int { return 0 } }

func TestDetectHost(t *testing.T) {
	p := fakeK3sServer(t)
	if h := DetectHost(p); !h.Server || h.Agent {
		t.Errorf("fake k3s server detected as %+v", h)
	}
	if h := DetectHost(HostPaths(t.TempDir())); h.Server || h.Agent {
		t.Errorf("empty root detected as %+v", h)
	}
	agent := t.TempDir()
	if err := os.MkdirAll(filepath.Join(agent, "etc/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agent, "etc/systemd/system/k3s-agent.service"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if h := DetectHost(HostPaths(agent)); h.Server || !h.Agent {
		t.Errorf("k3s agent detected as %+v", h)
	}
}

func TestInstallWritesAHelmChartCarryingTheEmbeddedChart(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	vals := map[string]any{"descheduler": map[string]any{"dryRun": true}}
	res, err := in.Install(context.Background(), InstallOptions{Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ManifestChanged || res.RestartK3s {
		t.Errorf("result = %+v, want a new manifest and no restart", res)
	}

	fi, err := os.Stat(p.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("manifest mode = %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(p.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	hc, err := DecodeHelmChart(data)
	if err != nil {
		t.Fatalf("manifest does not decode with helm-controller's types: %v", err)
	}
	if hc.Name != HelmChartName || hc.Namespace != HelmChartNamespace || hc.Spec.TargetNamespace != charts.DefaultNamespace || !hc.Spec.CreateNamespace {
		t.Errorf("HelmChart %s/%s targets %q (create=%t)", hc.Namespace, hc.Name, hc.Spec.TargetNamespace, hc.Spec.CreateNamespace)
	}
	if hc.Spec.Chart != "" || hc.Spec.Repo != "" {
		t.Errorf("HelmChart downloads a chart (%q from %q); it must be self-contained", hc.Spec.Chart, hc.Spec.Repo)
	}

	// chartContent round-trips to the embedded chart.
	archive, err := ChartArchive(hc)
	if err != nil {
		t.Fatal(err)
	}
	want, err := charts.Archive()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(archive, want) {
		t.Error("chartContent is not the embedded chart archive")
	}
	got, err := loader.LoadArchive(bytes.NewReader(archive))
	if err != nil {
		t.Fatalf("chartContent is not a chart: %v", err)
	}
	embedded, err := charts.Load()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(embedded.Metadata, got.Metadata); diff != "" {
		t.Errorf("chart metadata (-embedded,+chartContent):\n%s", diff)
	}
	if diff := cmp.Diff(templateNames(embedded.Templates), templateNames(got.Templates)); diff != "" {
		t.Errorf("templates (-embedded,+chartContent):\n%s", diff)
	}

	gotVals := map[string]any{}
	if err := yaml.Unmarshal([]byte(hc.Spec.ValuesContent), &gotVals); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(vals, gotVals); diff != "" {
		t.Errorf("valuesContent (-want,+got):\n%s", diff)
	}
}

func templateNames(files []*chart.File) []string {
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}

func TestInstallIsIdempotent(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	opts := InstallOptions{Values: map[string]any{"scheduler": map[string]any{"replicas": 2}}}
	if _, err := in.Install(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	before := tree(t, p.Root)
	fi, _ := os.Stat(p.Manifest())

	res, err := in.Install(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.ManifestChanged || res.RestartK3s {
		t.Errorf("second install reports changes: %+v", res)
	}
	if diff := cmp.Diff(before, tree(t, p.Root)); diff != "" {
		t.Errorf("second install changed the host (-before,+after):\n%s", diff)
	}
	if fi2, _ := os.Stat(p.Manifest()); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("second install rewrote the manifest; k3s would re-apply it")
	}

	// Other values do change the manifest.
	res, err = in.Install(context.Background(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.ManifestChanged {
		t.Error("install with other values did not update the manifest")
	}
}

func TestInvalidValuesWriteNothing(t *testing.T) {
	cases := []struct {
		name    string
		values  string
		wantErr string
	}{
		{"schema: threshold out of range", `scheduler: {plugins: {loadAware: {thresholds: {cpu: 150}}}}`, "/scheduler/plugins/loadAware/thresholds/cpu"},
		{"schema: wrong type", `descheduler: {dryRun: sometimes}`, "/descheduler/dryRun"},
		{"chart: replicas without leader election", `scheduler: {replicas: 2, leaderElection: {enabled: false}}`, "leaderElection.enabled"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := fakeK3sServer(t)
			before := tree(t, p.Root)
			vals := map[string]any{}
			if err := yaml.Unmarshal([]byte(tc.values), &vals); err != nil {
				t.Fatal(err)
			}
			_, err := Installer{Paths: p, Euid: root()}.Install(context.Background(), InstallOptions{Values: vals, Mode: ModeReplaceDefault})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "nothing written") {
				t.Fatalf("error = %v, want one naming %s and saying nothing was written", err, tc.wantErr)
			}
			if diff := cmp.Diff(before, tree(t, p.Root)); diff != "" {
				t.Errorf("host changed (-before,+after):\n%s", diff)
			}
		})
	}
}

func TestInstallOnTheRealHostNeedsRoot(t *testing.T) {
	in := Installer{Paths: HostPaths("/"), Euid: func() int { return 1000 }}
	_, err := in.Install(context.Background(), InstallOptions{})
	if err == nil || !strings.Contains(err.Error(), "sudo") || !strings.Contains(err.Error(), "--helm") {
		t.Fatalf("error = %v, want advice to use sudo or --helm", err)
	}
	_, err = in.Uninstall(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "sudo") {
		t.Fatalf("uninstall error = %v, want advice to use sudo", err)
	}
}

func TestConcurrentInstallsOneWins(t *testing.T) {
	p := fakeK3sServer(t)
	// Hold the lock as a running install would.
	unlock, err := lock(p.LockFile())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Installer{Paths: p, Euid: root()}.Install(context.Background(), InstallOptions{})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("install while another holds the lock: err = %v, want ErrLocked", err)
	}
	if _, statErr := os.Stat(p.Manifest()); !os.IsNotExist(statErr) {
		t.Error("the losing install wrote the manifest")
	}
	unlock()
	if _, err := (Installer{Paths: p, Euid: root()}).Install(context.Background(), InstallOptions{}); err != nil {
		t.Fatalf("install after the lock was released: %v", err)
	}
}

func TestConcurrentInstallsRace(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	const n = 4
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := in.Install(context.Background(), InstallOptions{})
			errs <- err
		}()
	}
	var ok int
	for i := 0; i < n; i++ {
		err := <-errs
		switch {
		case err == nil:
			ok++
		case !errors.Is(err, ErrLocked):
			t.Errorf("an install failed other than by losing the lock: %v", err)
		}
	}
	if ok == 0 {
		t.Fatal("no install won")
	}
	data, err := os.ReadFile(p.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeHelmChart(data); err != nil {
		t.Errorf("manifest after racing installs is damaged: %v", err)
	}
	matches, _ := filepath.Glob(filepath.Join(p.ManifestsDir(), ".*.tmp"))
	if len(matches) > 0 {
		t.Errorf("temporary files left behind: %v", matches)
	}
}

func TestReplaceDefaultModeAndBack(t *testing.T) {
	p := fakeK3sServer(t)
	pristine := tree(t, p.Root)
	in := Installer{Paths: p, Euid: root()}

	res, err := in.Install(context.Background(), InstallOptions{Mode: ModeReplaceDefault, WaitForRelease: deployed})
	if err != nil {
		t.Fatal(err)
	}
	if !res.RestartK3s {
		t.Error("switching to replaceDefault must ask for a k3s restart")
	}
	dropIn, err := os.ReadFile(p.DropIn())
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string][]string
	if err := yaml.Unmarshal(dropIn, &cfg); err != nil {
		t.Fatalf("drop-in is not k3s config YAML: %v", err)
	}
	if diff := cmp.Diff(map[string][]string{"kube-scheduler-arg+": {"config=/var/lib/rancher/k3s/server/ballast/bootstrap-scheduler.yaml"}}, cfg); diff != "" {
		t.Errorf("drop-in (-want,+got):\n%s", diff)
	}
	sched, err := os.ReadFile(p.BootstrapSchedulerConfig())
	if err != nil {
		t.Fatal(err)
	}
	var sc struct {
		ClientConnection struct{ Kubeconfig string } `json:"clientConnection"`
		Profiles         []struct {
			SchedulerName string `json:"schedulerName"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal(sched, &sc); err != nil {
		t.Fatal(err)
	}
	if sc.ClientConnection.Kubeconfig != "/var/lib/rancher/k3s/server/cred/scheduler.kubeconfig" ||
		len(sc.Profiles) != 1 || sc.Profiles[0].SchedulerName != DefaultBootstrapSchedulerName {
		t.Errorf("bootstrap scheduler config = %+v", sc)
	}
	hc := decodeManifest(t, p)
	if !strings.Contains(hc, "schedulerMode: replaceDefault") || !strings.Contains(hc, "bootstrapSchedulerName: ballast-bootstrap") {
		t.Errorf("valuesContent lacks the replace mode:\n%s", hc)
	}

	// Back to second mode: the drop-in goes, k3s must restart again.
	res, err = in.Install(context.Background(), InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.RestartK3s {
		t.Error("leaving replaceDefault must ask for a k3s restart")
	}
	for _, f := range []string{p.DropIn(), p.BootstrapSchedulerConfig()} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left behind in second mode", f)
		}
	}

	// Uninstall restores the host exactly.
	if _, err := in.Install(context.Background(), InstallOptions{Mode: ModeReplaceDefault, WaitForRelease: deployed}); err != nil {
		t.Fatal(err)
	}
	ures, err := in.Uninstall(context.Background(), func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if !ures.ManifestRemoved || !ures.RestartK3s {
		t.Errorf("uninstall result = %+v", ures)
	}
	if diff := cmp.Diff(pristine, tree(t, p.Root)); diff != "" {
		t.Errorf("uninstall left the host changed (-pristine,+after):\n%s", diff)
	}
	if _, err := os.Stat(p.StateDir()); !os.IsNotExist(err) {
		t.Error("state directory left behind")
	}
}

// deployed stands for a helm-controller that has deployed the release.
func deployed(context.Context, map[string]any) error { return nil }

// TestReplaceDefaultWritesTheDropInOnlyOnceDeployed: helm-controller's
// install Job asks for default-scheduler, which k3s stops serving when it
// restarts with the drop-in; so the drop-in must not exist before the
// release is deployed, and a failed wait leaves the host as in second mode
// plus the HelmChart.
func TestReplaceDefaultWritesTheDropInOnlyOnceDeployed(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}

	var sawManifest, sawDropIn bool
	var waitedFor map[string]any
	res, err := in.Install(context.Background(), InstallOptions{Mode: ModeReplaceDefault, WaitForRelease: func(_ context.Context, vals map[string]any) error {
		_, errManifest := os.Stat(p.Manifest())
		_, errDropIn := os.Stat(p.DropIn())
		sawManifest, sawDropIn, waitedFor = errManifest == nil, errDropIn == nil, vals
		return errors.New("helm-install-ballast has not run")
	}})
	if !errors.Is(err, ErrDropInNotWritten) || !strings.Contains(err.Error(), "helm-install-ballast has not run") {
		t.Fatalf("err = %v, want ErrDropInNotWritten with the reason", err)
	}
	if !sawManifest || sawDropIn {
		t.Errorf("while waiting: manifest written %t (want true), drop-in written %t (want false)", sawManifest, sawDropIn)
	}
	if diff := cmp.Diff(res.Values, waitedFor); diff != "" {
		t.Errorf("waited for other values than written (-written,+waited):\n%s", diff)
	}
	for _, f := range []string{p.DropIn(), p.BootstrapSchedulerConfig()} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s written although the release was not deployed", f)
		}
	}
	if !res.ManifestChanged || res.RestartK3s {
		t.Errorf("result = %+v, want the manifest written and no restart", res)
	}

	// Once deployed, running the install again writes the drop-in.
	res, err = in.Install(context.Background(), InstallOptions{Mode: ModeReplaceDefault, WaitForRelease: deployed})
	if err != nil {
		t.Fatal(err)
	}
	if res.ManifestChanged || !res.RestartK3s {
		t.Errorf("result = %+v, want only the drop-in written", res)
	}
	// In place: no further wait.
	res, err = in.Install(context.Background(), InstallOptions{Mode: ModeReplaceDefault, WaitForRelease: func(context.Context, map[string]any) error {
		t.Error("waited although the drop-in is in place")
		return nil
	}})
	if err != nil || res.ManifestChanged || res.RestartK3s {
		t.Errorf("third install: %+v, %v; want no change", res, err)
	}
}

// PreviousValues reads back what the last install wrote.
func TestPreviousValues(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	if _, found, err := in.PreviousValues(); found || err != nil {
		t.Fatalf("before any install: found=%t err=%v", found, err)
	}
	res, err := in.Install(context.Background(), InstallOptions{Values: map[string]any{"descheduler": map[string]any{"dryRun": true}}})
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := in.PreviousValues()
	if err != nil || !found {
		t.Fatalf("found=%t err=%v", found, err)
	}
	if diff := cmp.Diff(res.Values, got); diff != "" {
		t.Errorf("PreviousValues (-written,+read):\n%s", diff)
	}
}

func decodeManifest(t *testing.T, p Paths) string {
	t.Helper()
	data, err := os.ReadFile(p.Manifest())
	if err != nil {
		t.Fatal(err)
	}
	hc, err := DecodeHelmChart(data)
	if err != nil {
		t.Fatal(err)
	}
	return hc.Spec.ValuesContent
}

func TestReplaceModeNeverOverwritesAForeignDropIn(t *testing.T) {
	p := fakeK3sServer(t)
	if err := os.MkdirAll(filepath.Dir(p.DropIn()), 0o755); err != nil {
		t.Fatal(err)
	}
	foreign := "kube-scheduler-arg:\n  - v=4\n"
	if err := os.WriteFile(p.DropIn(), []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Installer{Paths: p, Euid: root()}.Install(context.Background(), InstallOptions{Mode: ModeReplaceDefault})
	if err == nil || !strings.Contains(err.Error(), "not written by ballast") {
		t.Fatalf("err = %v, want a refusal to overwrite", err)
	}
	if got, _ := os.ReadFile(p.DropIn()); string(got) != foreign {
		t.Error("foreign drop-in was changed")
	}
}

func TestUninstallDeletesThroughTheAPIBeforeTheFile(t *testing.T) {
	p := fakeK3sServer(t)
	pristine := tree(t, p.Root)
	in := Installer{Paths: p, Euid: root()}
	if _, err := in.Install(context.Background(), InstallOptions{}); err != nil {
		t.Fatal(err)
	}

	// An API failure keeps the file: without it, nobody could retry the deletion the k3s way.
	_, err := in.Uninstall(context.Background(), func(context.Context) error { return errors.New("connection refused") })
	if err == nil || !strings.Contains(err.Error(), "host files left in place") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(p.Manifest()); err != nil {
		t.Fatal("manifest removed although the HelmChart could not be deleted")
	}

	var fileExistedDuringDelete bool
	res, err := in.Uninstall(context.Background(), func(context.Context) error {
		_, statErr := os.Stat(p.Manifest())
		fileExistedDuringDelete = statErr == nil
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !fileExistedDuringDelete {
		t.Error("the manifest was removed before the HelmChart was deleted through the API")
	}
	if !res.ManifestRemoved || res.RestartK3s {
		t.Errorf("result = %+v, want manifest removed and no restart", res)
	}
	if diff := cmp.Diff(pristine, tree(t, p.Root)); diff != "" {
		t.Errorf("uninstall left something behind (-pristine,+after):\n%s", diff)
	}
}

// On a 1.34-1.35 server the namespace opt-in needs the beta
// MutatingAdmissionPolicy API: a drop-in turns it on, reversibly.
func TestAdmissionPolicyGate(t *testing.T) {
	p := fakeK3sServer(t)
	pristine := tree(t, p.Root)
	in := Installer{Paths: p, Euid: root()}

	res, err := in.Install(context.Background(), InstallOptions{AdmissionPolicyGate: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.RestartK3s {
		t.Error("writing the gate drop-in must ask for a k3s restart")
	}
	data, err := os.ReadFile(p.AdmissionPolicyDropIn())
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string][]string
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("drop-in is not k3s config YAML: %v", err)
	}
	want := map[string][]string{"kube-apiserver-arg+": {"feature-gates=MutatingAdmissionPolicy=true", "runtime-config=admissionregistration.k8s.io/v1beta1=true"}}
	if diff := cmp.Diff(want, cfg); diff != "" {
		t.Errorf("drop-in (-want,+got):\n%s", diff)
	}
	if res, err = in.Install(context.Background(), InstallOptions{AdmissionPolicyGate: true}); err != nil || res.RestartK3s {
		t.Errorf("same install again: %+v, %v; want no restart", res, err)
	}

	// Not wanted any more (a 1.36 server, or optIn off): removed, restart.
	if res, err = in.Install(context.Background(), InstallOptions{}); err != nil || !res.RestartK3s {
		t.Errorf("install without the gate: %+v, %v; want a restart", res, err)
	}
	if _, err := os.Stat(p.AdmissionPolicyDropIn()); !os.IsNotExist(err) {
		t.Error("gate drop-in left behind")
	}

	// Uninstall removes it as well.
	if _, err := in.Install(context.Background(), InstallOptions{AdmissionPolicyGate: true}); err != nil {
		t.Fatal(err)
	}
	if ures, err := in.Uninstall(context.Background(), func(context.Context) error { return nil }); err != nil || !ures.RestartK3s {
		t.Errorf("uninstall: %+v, %v; want a restart", ures, err)
	}
	if diff := cmp.Diff(pristine, tree(t, p.Root)); diff != "" {
		t.Errorf("uninstall left the host changed (-pristine,+after):\n%s", diff)
	}
}

// On a server that does not carry the HelmChart manifest, install writes
// none and removes the copy an earlier install left, so that this server's
// start cannot apply it again; it never removes a file it did not write.
func TestInstallOnAnotherServerThanTheManifestsKeepsNoCopy(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	if _, err := in.Install(context.Background(), InstallOptions{ManifestNode: "s2"}); err != nil {
		t.Fatal(err)
	}
	hc, err := DecodeHelmChart(mustRead(t, p.Manifest()))
	if err != nil {
		t.Fatal(err)
	}
	if got := hc.Annotations[ManifestNodeAnnotation]; got != "s2" {
		t.Errorf("HelmChart annotation %s = %q, want s2", ManifestNodeAnnotation, got)
	}

	res, err := in.Install(context.Background(), InstallOptions{ManifestNode: "s2", ManifestElsewhere: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.CopyRemoved || res.ManifestChanged {
		t.Errorf("result = %+v, want the copy removed and nothing written", res)
	}
	if _, err := os.Stat(p.Manifest()); !os.IsNotExist(err) {
		t.Error("manifest still on a server that does not carry it")
	}

	foreign := []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine}\n")
	if err := os.WriteFile(p.Manifest(), foreign, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = in.Install(context.Background(), InstallOptions{ManifestElsewhere: "s1"})
	if err == nil || !strings.Contains(err.Error(), "was not written by ballast install") {
		t.Fatalf("err = %v, want a refusal to remove a foreign file", err)
	}
	if got := mustRead(t, p.Manifest()); !bytes.Equal(got, foreign) {
		t.Error("foreign file changed")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestInstallPlacesImagesAndUninstallRemovesThem checks that an images
// archive goes where k3s imports images, once, and that uninstall takes
// away what install placed and nothing else.
func TestInstallPlacesImagesAndUninstallRemovesThem(t *testing.T) {
	p := fakeK3sServer(t)
	in := Installer{Paths: p, Euid: root()}
	archive := filepath.Join(t.TempDir(), "ballast-images-linux-amd64.tar")
	if err := os.WriteFile(archive, []byte("images"), 0o644); err != nil {
		t.Fatal(err)
	}
	// k3s's own archive, which Ballast must leave alone.
	theirs := filepath.Join(p.ImagesDir(), "k3s-airgap-images-amd64.tar")
	if err := os.MkdirAll(p.ImagesDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(theirs, []byte("k3s"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := in.Install(context.Background(), InstallOptions{Images: archive})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(p.ImagesDir(), "ballast-images-linux-amd64.tar")
	if res.Images != want || !res.ImagesChanged {
		t.Errorf("placed %q (changed %t), want %q changed", res.Images, res.ImagesChanged, want)
	}
	if got, _ := os.ReadFile(want); string(got) != "images" {
		t.Errorf("placed archive holds %q", got)
	}
	if res, err = in.Install(context.Background(), InstallOptions{Images: archive}); err != nil || res.ImagesChanged {
		t.Errorf("the same archive again: changed %t, err %v; want no change", res.ImagesChanged, err)
	}
	un, err := in.Uninstall(context.Background(), func(context.Context) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if len(un.ImagesRemoved) != 1 || un.ImagesRemoved[0] != want {
		t.Errorf("uninstall removed images %v, want %s", un.ImagesRemoved, want)
	}
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Errorf("the placed archive is still there (%v)", err)
	}
	if _, err := os.Stat(theirs); err != nil {
		t.Errorf("uninstall touched k3s's own archive: %v", err)
	}
	if _, err := os.Stat(p.StateDir()); !os.IsNotExist(err) {
		t.Errorf("Ballast's state directory is left (%v)", err)
	}
}
