package helmjob

import (
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/repo"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/klog/v2/ktesting"
)

// testChart renders one ConfigMap holding its values.
func testChart(version string) *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "demo", Version: version},
		Values:   map[string]any{"color": "red", "size": 1},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(
			"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: demo\ndata:\n  color: {{ .Values.color | quote }}\n")}},
	}
}

// chartContent lays out a Job's volumes with the chart as spec.chartContent
// carries it and the given values files.
func chartContent(t *testing.T, c *chart.Chart, valuesFiles map[string]string) Paths {
	t.Helper()
	root := t.TempDir()
	p := Paths{Config: filepath.Join(root, "config"), Chart: filepath.Join(root, "chart"), CAFiles: filepath.Join(root, "ca-files"),
		Auth: filepath.Join(root, "auth"), Home: filepath.Join(root, "home"), Tmp: filepath.Join(root, "tmp"),
		TerminationLog: filepath.Join(root, "termination-log")}
	for _, d := range []string{p.Config, p.Chart, p.Home, p.Tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if c != nil {
		tgz, err := chartutil.Save(c, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(tgz)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p.Chart, "demo.tgz.base64"), []byte(base64.StdEncoding.EncodeToString(raw)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, content := range valuesFiles {
		if err := os.WriteFile(filepath.Join(p.Config, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func memoryConfig(t *testing.T) *action.Configuration {
	t.Helper()
	mem := driver.NewMemory()
	mem.SetNamespace("apps")
	return &action.Configuration{
		Releases:     storage.Init(mem),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
}

// seed stores a release of the demo chart at revision and status.
func seed(t *testing.T, cfg *action.Configuration, revision int, status release.Status) {
	t.Helper()
	rel := &release.Release{Name: "demo", Namespace: "apps", Version: revision, Chart: testChart("0.1.0"),
		Config: map[string]any{}, Info: &release.Info{Status: status}}
	if err := cfg.Releases.Create(rel); err != nil {
		t.Fatal(err)
	}
}

func baseEnv() Env {
	return Env{Name: "demo", TargetNamespace: "apps", Driver: "secret", FailurePolicy: PolicyReinstall,
		ServerSide: "auto", ConfigHash: "SHA256=ABC"}
}

func TestRun(t *testing.T) {
	install := Action{Namespace: "apps", CreateNamespace: true}
	tests := []struct {
		name     string
		seed     []release.Status // one release per revision, oldest first
		env      func(*Env)
		action   Action
		wantErr  bool
		wantExit int
		// wantLast is the newest revision and its status afterwards; 0 means no release.
		wantLast   int
		wantStatus release.Status
	}{
		{name: "no release: installs", action: install, wantLast: 1, wantStatus: release.StatusDeployed},
		{name: "deployed: upgrades", seed: []release.Status{release.StatusDeployed}, action: install,
			env: func(e *Env) { e.ExpectedRevision = "1" }, wantLast: 2, wantStatus: release.StatusDeployed},
		{name: "another job moved the release on: nothing done", seed: []release.Status{release.StatusSuperseded, release.StatusDeployed},
			action: install, env: func(e *Env) { e.ExpectedRevision = "1" }, wantLast: 2, wantStatus: release.StatusDeployed},
		// Reinstall uninstalls (no history kept) and installs revision 1 again.
		{name: "interrupted install: marked failed, reinstalled", seed: []release.Status{release.StatusPendingInstall},
			action: install, wantLast: 1, wantStatus: release.StatusDeployed},
		{name: "interrupted upgrade: marked failed, upgraded", seed: []release.Status{release.StatusDeployed, release.StatusPendingUpgrade},
			action: install, wantLast: 3, wantStatus: release.StatusDeployed},
		{name: "failed, abort: error, release left", seed: []release.Status{release.StatusFailed}, action: install,
			env: func(e *Env) { e.FailurePolicy = PolicyAbort }, wantErr: true, wantLast: 1, wantStatus: release.StatusFailed},
		{name: "failed, retry: upgraded", seed: []release.Status{release.StatusFailed}, action: install,
			env: func(e *Env) { e.FailurePolicy = PolicyRetry }, wantLast: 2, wantStatus: release.StatusDeployed},
		{name: "delete, no release: nothing to do", action: Action{Delete: true}},
		{name: "delete: uninstalled", seed: []release.Status{release.StatusDeployed}, action: Action{Delete: true}},
		{name: "delete, release moved on: left", seed: []release.Status{release.StatusSuperseded, release.StatusDeployed},
			action: Action{Delete: true}, env: func(e *Env) { e.ExpectedRevision = "1" }, wantLast: 2, wantStatus: release.StatusDeployed},
		{name: "helm v2: refused with 64", action: install, env: func(e *Env) { e.HelmVersion = "v2" }, wantErr: true, wantExit: 64},
		{name: "server-side apply asked for: refused", action: install, env: func(e *Env) { e.ServerSide = "true" }, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := memoryConfig(t)
			for i, s := range tc.seed {
				seed(t, cfg, i+1, s)
			}
			env := baseEnv()
			if tc.env != nil {
				tc.env(&env)
			}
			job := Job{Env: env, Action: tc.action, Paths: chartContent(t, testChart("0.2.0"), nil)}
			_, ctx := ktesting.NewTestContext(t)
			msg, err := job.Run(ctx, cfg)
			t.Logf("outcome %q, err %v", msg, err)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Run error = %v, want error %t", err, tc.wantErr)
			}
			var exit *ExitError
			if tc.wantExit != 0 && (!errors.As(err, &exit) || exit.Code != tc.wantExit) {
				t.Errorf("Run error %v, want exit code %d", err, tc.wantExit)
			}
			last, err := cfg.Releases.Last("demo")
			if tc.wantLast == 0 {
				if err == nil {
					t.Errorf("release left at revision %d (%s), want none", last.Version, last.Info.Status)
				}
				return
			}
			if err != nil {
				t.Fatalf("no release, want revision %d: %v", tc.wantLast, err)
			}
			if last.Version != tc.wantLast || last.Info.Status != tc.wantStatus {
				t.Errorf("release at revision %d %s, want %d %s", last.Version, last.Info.Status, tc.wantLast, tc.wantStatus)
			}
			if strings.HasPrefix(msg, "Installed") || strings.HasPrefix(msg, "Upgraded") {
				// Written by this run: helm-controller finds its hash on it.
				if got := last.Labels[ConfigHashLabel]; got != env.ConfigHash {
					t.Errorf("release label %s = %q, want %q", ConfigHashLabel, got, env.ConfigHash)
				}
			}
		})
	}
}

// TestRunMarksInterruptedRelease checks that a release an interrupted job
// left pending is recorded as failed before the reinstall.
func TestRunMarksInterruptedRelease(t *testing.T) {
	cfg := memoryConfig(t)
	seed(t, cfg, 1, release.StatusPendingInstall)
	job := Job{Env: baseEnv(), Action: Action{Namespace: "apps"}, Paths: chartContent(t, testChart("0.2.0"), nil)}
	job.Env.FailurePolicy = PolicyAbort
	_, ctx := ktesting.NewTestContext(t)
	if _, err := job.Run(ctx, cfg); err == nil {
		t.Fatal("Run succeeded on a failed release with policy abort")
	}
	rel, err := cfg.Releases.Get("demo", 1)
	if err != nil {
		t.Fatal(err)
	}
	if rel.Info.Status != release.StatusFailed {
		t.Errorf("interrupted release is %s, want failed", rel.Info.Status)
	}
}

// TestValues checks the order helm-controller's files are merged in: the
// HelmChart's, then the HelmChartConfig's, then --set.
func TestValues(t *testing.T) {
	p := chartContent(t, nil, map[string]string{
		"values-0-000-HelmChart-ValuesContent.yaml":       "color: blue\nsize: 2\nshape: round\n",
		"values-1-000-HelmChartConfig-ValuesContent.yaml": "size: 3\n",
		"ca-file.pem": "not values",
	})
	job := Job{Paths: p, Action: Action{Set: []string{"shape=square"}, SetString: []string{"code=007"}}}
	got, err := job.values()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"color": "blue", "size": float64(3), "shape": "square", "code": "007"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("values (-want,+got):\n%s", diff)
	}
}

// TestFetchFromRepository installs a chart named by a HelmChart's
// spec.repo and spec.chart, served by a chart repository.
func TestFetchFromRepository(t *testing.T) {
	dir := t.TempDir()
	tgz, err := chartutil.Save(testChart("1.2.3"), dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	idx := repo.NewIndexFile()
	if err := idx.MustAdd(testChart("1.2.3").Metadata, filepath.Base(tgz), srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	if err := idx.WriteFile(filepath.Join(dir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := chartContent(t, nil, nil)
	settings := cli.New()
	settings.RepositoryCache = filepath.Join(p.Home, ".cache", "helm", "repository")
	settings.RepositoryConfig = filepath.Join(p.Home, ".config", "helm", "repositories.yaml")
	settings.RegistryConfig = filepath.Join(p.Home, ".config", "helm", "registry", "config.json")
	env := baseEnv()
	// helm-controller names a repository's chart <HelmChart>/<chart>.
	env.Repo, env.Chart = srv.URL, "demo/demo"
	job := Job{Env: env, Action: Action{Namespace: "apps", Version: "1.2.3"}, Paths: p, Settings: settings}
	cfg := memoryConfig(t)
	_, ctx := ktesting.NewTestContext(t)
	if _, err := job.Run(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	rel, err := cfg.Releases.Last("demo")
	if err != nil {
		t.Fatal(err)
	}
	if rel.Chart.Metadata.Version != "1.2.3" {
		t.Errorf("installed chart version %s, want 1.2.3 from the repository", rel.Chart.Metadata.Version)
	}
}

func TestChartRef(t *testing.T) {
	for _, tc := range []struct{ host, chart, want string }{
		{"10.43.0.1", "https://%{KUBERNETES_API}%/static/charts/x.tgz", "https://10.43.0.1:443/static/charts/x.tgz"},
		{"fd00::1", "https://%{KUBERNETES_API}%/static/charts/x.tgz", "https://[fd00::1]:443/static/charts/x.tgz"},
		{"10.43.0.1", "repo/x", "repo/x"},
	} {
		e := Env{Chart: tc.chart, KubernetesServiceHost: tc.host, KubernetesServicePort: "443"}
		if got := e.chartRef(); got != tc.want {
			t.Errorf("chartRef(%q on %s) = %q, want %q", tc.chart, tc.host, got, tc.want)
		}
	}
}
