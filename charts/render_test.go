package charts

import (
	"context"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	schedconfigv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

// TestRenderedObjectsAreSane renders the defaults and every example and checks what must hold for any values.
func TestRenderedObjectsAreSane(t *testing.T) {
	cases := map[string]map[string]any{"defaults": {}}
	for _, f := range exampleValueFiles(t) {
		cases[filepath.Base(f)] = readValues(t, f)
	}
	for name, vals := range cases {
		t.Run(name, func(t *testing.T) {
			objs := render(t, vals)
			if len(objs) == 0 {
				t.Fatal("nothing rendered")
			}
			var deployments int
			for _, o := range objs {
				checkLabels(t, o)
				checkNoKubeconfig(t, o)
				if d, ok := o.typed.(*appsv1.Deployment); ok {
					deployments++
					checkPodSecurity(t, d.Name, &d.Spec.Template.Spec)
				}
				if _, ok := o.typed.(*corev1.Secret); ok {
					t.Errorf("Secret %s rendered: the chart must not carry credentials", o.name)
				}
			}
			if deployments == 0 {
				t.Error("no Deployment rendered")
			}
		})
	}
}

func checkLabels(t *testing.T, o object) {
	t.Helper()
	md, _ := o.raw["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	for _, key := range []string{"app.kubernetes.io/name", "app.kubernetes.io/instance", "app.kubernetes.io/version",
		"app.kubernetes.io/managed-by", "app.kubernetes.io/part-of", "helm.sh/chart"} {
		if labels[key] == nil {
			t.Errorf("%s/%s lacks label %s", o.kind, o.name, key)
		}
	}
}

// checkNoKubeconfig fails on any ConfigMap that looks like a kubeconfig or carries a token.
func checkNoKubeconfig(t *testing.T, o object) {
	t.Helper()
	cm, ok := o.typed.(*corev1.ConfigMap)
	if !ok {
		return
	}
	for key, data := range cm.Data {
		for _, marker := range []string{"kind: Config", "client-certificate-data", "client-key-data", "token:", "certificate-authority-data"} {
			if strings.Contains(data, marker) {
				t.Errorf("ConfigMap %s key %s contains %q: kubeconfigs and tokens belong in Secrets", cm.Name, key, marker)
			}
		}
	}
}

// checkPodSecurity enforces the restricted Pod Security Standard on a pod template.
func checkPodSecurity(t *testing.T, owner string, spec *corev1.PodSpec) {
	t.Helper()
	psc := spec.SecurityContext
	if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
		t.Errorf("%s: pod must set runAsNonRoot", owner)
	}
	if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("%s: pod must use the RuntimeDefault seccomp profile", owner)
	}
	if spec.HostNetwork || spec.HostPID || spec.HostIPC {
		t.Errorf("%s: pod must not share host namespaces", owner)
	}
	for _, v := range spec.Volumes {
		if v.HostPath != nil {
			t.Errorf("%s: volume %s is a hostPath", owner, v.Name)
		}
	}
	for _, c := range append(spec.InitContainers, spec.Containers...) {
		sc := c.SecurityContext
		switch {
		case sc == nil:
			t.Errorf("%s/%s: no container securityContext", owner, c.Name)
			continue
		case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
			t.Errorf("%s/%s: allowPrivilegeEscalation must be false", owner, c.Name)
		case sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
			t.Errorf("%s/%s: root filesystem must be read-only", owner, c.Name)
		case sc.Privileged != nil && *sc.Privileged:
			t.Errorf("%s/%s: privileged", owner, c.Name)
		case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0:
			t.Errorf("%s/%s: capabilities must drop ALL and add none, got %+v", owner, c.Name, sc.Capabilities)
		}
		if c.Resources.Requests == nil {
			t.Errorf("%s/%s: no resource requests", owner, c.Name)
		}
	}
}

func TestDefaultsRenderTheExpectedObjects(t *testing.T) {
	objs := render(t, nil)
	var got []string
	for _, o := range objs {
		got = append(got, o.kind+"/"+o.name)
	}
	sort.Strings(got)
	want := []string{
		"ClusterRole/ballast-descheduler", "ClusterRole/ballast-load-watcher", "ClusterRole/ballast-scheduler",
		"ClusterRoleBinding/ballast-descheduler", "ClusterRoleBinding/ballast-load-watcher", "ClusterRoleBinding/ballast-scheduler",
		"ConfigMap/ballast-descheduler", "ConfigMap/ballast-descheduler-moves", "ConfigMap/ballast-scheduler",
		"Deployment/ballast-descheduler", "Deployment/ballast-load-watcher", "Deployment/ballast-scheduler",
		"MutatingAdmissionPolicy/ballast-opt-in", "MutatingAdmissionPolicyBinding/ballast-opt-in",
		"NetworkPolicy/ballast-load-watcher",
		"PodDisruptionBudget/ballast-descheduler", "PodDisruptionBudget/ballast-load-watcher", "PodDisruptionBudget/ballast-scheduler",
		"Role/ballast-descheduler", "Role/ballast-scheduler",
		"RoleBinding/ballast-descheduler", "RoleBinding/ballast-scheduler", "RoleBinding/ballast-scheduler-auth-reader",
		"Service/ballast-load-watcher",
		"ServiceAccount/ballast-descheduler", "ServiceAccount/ballast-load-watcher", "ServiceAccount/ballast-scheduler",
		"ValidatingAdmissionPolicy/ballast-descheduler-moves", "ValidatingAdmissionPolicyBinding/ballast-descheduler-moves",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rendered objects (-want,+got):\n%s", diff)
	}
}

func TestEachComponentCanBeDisabled(t *testing.T) {
	for _, component := range []string{"scheduler", "descheduler"} {
		t.Run(component, func(t *testing.T) {
			objs := render(t, map[string]any{component: map[string]any{"enabled": false}})
			for _, o := range objs {
				if strings.HasSuffix(o.name, "-"+component) || strings.HasPrefix(o.name, "ballast-"+component+"-") {
					t.Errorf("%s/%s rendered with %s disabled", o.kind, o.name, component)
				}
			}
			if _, ok := find(objs, "Deployment", "ballast-load-watcher"); !ok {
				t.Error("load-watcher missing")
			}
		})
	}
	t.Run("load-watcher with an external address", func(t *testing.T) {
		objs := render(t, valuesFromYAML(t, `
load-watcher: {enabled: false}
global: {loadWatcher: {address: "http://usage.example:2020"}}`))
		if _, ok := find(objs, "Deployment", "ballast-load-watcher"); ok {
			t.Error("load-watcher rendered although disabled")
		}
		d := mustFind(t, objs, "Deployment", "ballast-scheduler").typed.(*appsv1.Deployment)
		if !contains(d.Spec.Template.Spec.Containers[0].Args, "--load-watcher-address=http://usage.example:2020") {
			t.Errorf("scheduler does not use the external load-watcher: %v", d.Spec.Template.Spec.Containers[0].Args)
		}
	})
}

// schedulerConfig decodes the rendered KubeSchedulerConfiguration strictly, so a misspelt field fails.
func schedulerConfig(t *testing.T, objs []object) *schedconfigv1.KubeSchedulerConfiguration {
	t.Helper()
	cm := mustFind(t, objs, "ConfigMap", "ballast-scheduler").typed.(*corev1.ConfigMap)
	cfg := &schedconfigv1.KubeSchedulerConfiguration{}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["config.yaml"]), cfg); err != nil {
		t.Fatalf("scheduler config does not decode strictly: %v\n%s", err, cm.Data["config.yaml"])
	}
	return cfg
}

func profileNames(cfg *schedconfigv1.KubeSchedulerConfiguration) []string {
	var names []string
	for _, p := range cfg.Profiles {
		names = append(names, *p.SchedulerName)
	}
	return names
}

func TestSchedulerConfigFollowsValues(t *testing.T) {
	cfg := schedulerConfig(t, render(t, valuesFromYAML(t, `
scheduler:
  plugins:
    loadAware:
      weight: 7
      thresholds: {cpu: 60, memory: 70}
      scoringStrategy: {type: TargetPacking, targetUtilization: 55}
    loadVariationRiskBalancing: {enabled: false}
    podCountBalance: {enabled: true, weight: 2}
    disabledScorePlugins: [NodeResourcesBalancedAllocation]
descheduler:
  loadAwareBalance:
    highThresholds: {cpu: 60, memory: 70}
    lowThresholds: {cpu: 40, memory: 50}
  spreadReplicas:
    highThresholds: {cpu: 60, memory: 70}`)))

	if diff := cmp.Diff([]string{"ballast-scheduler"}, profileNames(cfg)); diff != "" {
		t.Errorf("profiles (-want,+got):\n%s", diff)
	}
	p := cfg.Profiles[0]
	var enabled []string
	for _, pl := range p.Plugins.MultiPoint.Enabled {
		enabled = append(enabled, pl.Name)
		// PodCountBalance is a term of LoadAware's score: 7 + 2.
		if pl.Name == "LoadAware" && *pl.Weight != 9 {
			t.Errorf("LoadAware weight = %d, want 9, its terms' weights 7 and 2", *pl.Weight)
		}
	}
	if diff := cmp.Diff([]string{"LoadAware"}, enabled); diff != "" {
		t.Errorf("multiPoint plugins (-want,+got):\n%s", diff)
	}
	if len(p.Plugins.Score.Disabled) != 1 || p.Plugins.Score.Disabled[0].Name != "NodeResourcesBalancedAllocation" {
		t.Errorf("score.disabled = %+v", p.Plugins.Score.Disabled)
	}
	if len(p.PluginConfig) != 1 || p.PluginConfig[0].Name != "LoadAware" {
		t.Fatalf("pluginConfig = %+v, want only LoadAware", p.PluginConfig)
	}
	args := map[string]any{}
	if err := yaml.Unmarshal(p.PluginConfig[0].Args.Raw, &args); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"thresholds":          map[string]any{"cpu": float64(60), "memory": float64(70)},
		"thresholdStatistics": map[string]any{"cpu": "Average", "memory": "Latest"},
		"filterCriticalPods":  false,
		"placementEvents":     true,
		"scoringStrategy":     map[string]any{"type": "TargetPacking", "targetUtilization": float64(55), "combine": "Bottleneck", "resources": []any{map[string]any{"name": "cpu", "weight": float64(1)}, map[string]any{"name": "memory", "weight": float64(1)}}, "weight": float64(7)},
		"window":              "5m",
		"podEstimate":         map[string]any{"requestMultiplier": float64(1), "defaultCPU": "100m", "defaultMemory": "200Mi"},
		"podCountBalance":     map[string]any{"weight": float64(2)},
		"plannedMoves":        map[string]any{"namespace": DefaultNamespace, "name": "ballast-descheduler-moves", "validFor": "5m"},
	}
	if diff := cmp.Diff(want, args); diff != "" {
		t.Errorf("LoadAware args (-want,+got):\n%s", diff)
	}
}

// Without LoadAware, LoadVariationRiskBalancing and PodCountBalance run as
// plugins of their own, with their weights and args.
func TestSchedulerConfigWithoutLoadAware(t *testing.T) {
	cfg := schedulerConfig(t, render(t, valuesFromYAML(t, `
scheduler:
  plugins:
    loadAware: {enabled: false}
    loadVariationRiskBalancing: {weight: 2, window: 5m}`)))
	p := cfg.Profiles[0]
	weights := map[string]int32{}
	for _, pl := range p.Plugins.MultiPoint.Enabled {
		weights[pl.Name] = *pl.Weight
	}
	if diff := cmp.Diff(map[string]int32{"LoadVariationRiskBalancing": 2, "PodCountBalance": 1}, weights); diff != "" {
		t.Errorf("multiPoint plugins and weights (-want,+got):\n%s", diff)
	}
	if len(p.PluginConfig) != 1 || p.PluginConfig[0].Name != "LoadVariationRiskBalancing" {
		t.Fatalf("pluginConfig = %+v, want LoadVariationRiskBalancing's alone", p.PluginConfig)
	}
	args := map[string]any{}
	if err := yaml.Unmarshal(p.PluginConfig[0].Args.Raw, &args); err != nil {
		t.Fatal(err)
	}
	if args["window"] != "5m" || args["weight"] != nil {
		t.Errorf("LoadVariationRiskBalancing args = %v, want the values' window and no weight", args)
	}
}

func TestReplaceDefaultMode(t *testing.T) {
	objs := render(t, valuesFromYAML(t, `global: {schedulerMode: replaceDefault}`))
	cfg := schedulerConfig(t, objs)
	if diff := cmp.Diff([]string{"ballast-scheduler", "default-scheduler"}, profileNames(cfg)); diff != "" {
		t.Errorf("profiles (-want,+got):\n%s", diff)
	}
	// Ballast's own pods must not wait for Ballast: the renamed built-in scheduler places them.
	for _, name := range []string{"ballast-load-watcher", "ballast-scheduler", "ballast-descheduler"} {
		d := mustFind(t, objs, "Deployment", name).typed.(*appsv1.Deployment)
		if got := d.Spec.Template.Spec.SchedulerName; got != "ballast-bootstrap" {
			t.Errorf("%s schedulerName = %q, want ballast-bootstrap", name, got)
		}
	}
	second := render(t, nil)
	d := mustFind(t, second, "Deployment", "ballast-scheduler").typed.(*appsv1.Deployment)
	if got := d.Spec.Template.Spec.SchedulerName; got != "" {
		t.Errorf("second mode: Ballast pods use schedulerName %q, want the cluster default", got)
	}
}

func TestLeaderElection(t *testing.T) {
	objs := render(t, valuesFromYAML(t, `{scheduler: {replicas: 3}, descheduler: {replicas: 2}}`))
	cfg := schedulerConfig(t, objs)
	le := cfg.LeaderElection
	if le.LeaderElect == nil || !*le.LeaderElect || le.ResourceName != "ballast-scheduler" || le.ResourceNamespace != DefaultNamespace {
		t.Errorf("scheduler leader election = %+v", le)
	}
	role := mustFind(t, objs, "Role", "ballast-scheduler")
	if !strings.Contains(mustYAML(t, role.raw), "- ballast-scheduler") {
		t.Errorf("scheduler Role does not grant its lease:\n%s", mustYAML(t, role.raw))
	}
	// Every scheduler replica releases the lease of a leader that crashed: the same lease.
	sd := mustFind(t, objs, "Deployment", "ballast-scheduler").typed.(*appsv1.Deployment)
	if want := "--leader-lease=" + le.ResourceNamespace + "/" + le.ResourceName; !contains(sd.Spec.Template.Spec.Containers[0].Args, want) {
		t.Errorf("scheduler args lack %s: %v", want, sd.Spec.Template.Spec.Containers[0].Args)
	}
	dd := mustFind(t, objs, "Deployment", "ballast-descheduler").typed.(*appsv1.Deployment)
	if !contains(dd.Spec.Template.Spec.Containers[0].Args, "--leader-elect=true") {
		t.Errorf("descheduler args lack --leader-elect: %v", dd.Spec.Template.Spec.Containers[0].Args)
	}
	// The connector keeps the API server's addresses on an emptyDir, across restarts of the container.
	if !contains(sd.Spec.Template.Spec.Containers[0].Args, "--api-server-cache=/var/run/ballast/api-server") {
		t.Errorf("scheduler args lack --api-server-cache: %v", sd.Spec.Template.Spec.Containers[0].Args)
	}
	var state bool
	for _, v := range sd.Spec.Template.Spec.Volumes {
		state = state || (v.Name == "state" && v.EmptyDir != nil)
	}
	if !state {
		t.Errorf("scheduler has no emptyDir for its state: %+v", sd.Spec.Template.Spec.Volumes)
	}
	single := render(t, valuesFromYAML(t, `{scheduler: {leaderElection: {enabled: false}}}`))
	sd = mustFind(t, single, "Deployment", "ballast-scheduler").typed.(*appsv1.Deployment)
	for _, a := range sd.Spec.Template.Spec.Containers[0].Args {
		if strings.HasPrefix(a, "--leader-lease") {
			t.Errorf("scheduler without leader election has %s", a)
		}
	}
}

// LoadAware reads the ConfigMap the descheduler keeps its moves in — the
// one the descheduler's --moves-configmap names — and may read that one
// ConfigMap alone; turned off, neither the arg nor the grant is rendered.
func TestSchedulerReadsThePlannedMoves(t *testing.T) {
	laArgs := func(objs []object) map[string]any {
		t.Helper()
		args := map[string]any{}
		for _, pc := range schedulerConfig(t, objs).Profiles[0].PluginConfig {
			if pc.Name == "LoadAware" {
				if err := yaml.Unmarshal(pc.Args.Raw, &args); err != nil {
					t.Fatal(err)
				}
			}
		}
		return args
	}
	objs := render(t, nil)
	dd := mustFind(t, objs, "Deployment", "ballast-descheduler").typed.(*appsv1.Deployment)
	var kept string
	for _, a := range dd.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--moves-configmap="); ok {
			kept = v
		}
	}
	want := map[string]any{"namespace": DefaultNamespace, "name": "ballast-descheduler-moves", "validFor": "5m"}
	if diff := cmp.Diff(want, laArgs(objs)["plannedMoves"]); diff != "" {
		t.Errorf("plannedMoves (-want,+got):\n%s", diff)
	}
	if kept != DefaultNamespace+"/ballast-descheduler-moves" {
		t.Errorf("the descheduler keeps its moves in %q, not where the scheduler reads them", kept)
	}
	role := mustFind(t, objs, "Role", "ballast-scheduler").typed.(*rbacv1.Role)
	var granted bool
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "configmaps") {
			granted = true
			if diff := cmp.Diff([]string{"ballast-descheduler-moves"}, r.ResourceNames); diff != "" {
				t.Errorf("configmaps granted by name (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"get", "list", "watch"}, r.Verbs); diff != "" {
				t.Errorf("configmaps verbs (-want,+got):\n%s", diff)
			}
		}
	}
	if !granted {
		t.Error("the scheduler's Role grants no ConfigMap")
	}
	// Without leader election the Role holds the moves' rule alone.
	single := render(t, valuesFromYAML(t, `{scheduler: {leaderElection: {enabled: false}}}`))
	if role, ok := find(single, "Role", "ballast-scheduler"); !ok || len(role.typed.(*rbacv1.Role).Rules) != 1 {
		t.Errorf("without leader election the scheduler's Role is %v (rendered %t), want the moves' rule alone", role.raw, ok)
	}
	mustFind(t, single, "RoleBinding", "ballast-scheduler")

	off := render(t, valuesFromYAML(t, `{scheduler: {leaderElection: {enabled: false}, plugins: {loadAware: {plannedMoves: {enabled: false}}}}}`))
	if _, ok := laArgs(off)["plannedMoves"]; ok {
		t.Errorf("plannedMoves rendered while off: %v", laArgs(off))
	}
	for _, kind := range []string{"Role", "RoleBinding"} {
		if _, ok := find(off, kind, "ballast-scheduler"); ok {
			t.Errorf("the scheduler has a %s with neither leader election nor planned moves", kind)
		}
	}
}

func TestChecksumFollowsConfig(t *testing.T) {
	checksum := func(vals map[string]any, name string) string {
		d := mustFind(t, render(t, vals), "Deployment", name).typed.(*appsv1.Deployment)
		sum := d.Spec.Template.Annotations["checksum/config"]
		if len(sum) != 64 {
			t.Fatalf("%s checksum/config = %q", name, sum)
		}
		return sum
	}
	base := checksum(nil, "ballast-scheduler")
	if base == checksum(valuesFromYAML(t, `scheduler: {plugins: {loadAware: {thresholds: {cpu: 90}}}}`), "ballast-scheduler") {
		t.Error("scheduler checksum/config did not change with its configuration")
	}
	if base != checksum(valuesFromYAML(t, `scheduler: {logLevel: 4}`), "ballast-scheduler") {
		t.Error("scheduler checksum/config changed although its configuration did not")
	}
	if checksum(nil, "ballast-descheduler") == checksum(valuesFromYAML(t, `descheduler: {loadAwareBalance: {maxEvictionsPerNode: 1}}`), "ballast-descheduler") {
		t.Error("descheduler checksum/config did not change with its policy")
	}
}

func TestLoadWatcherArgs(t *testing.T) {
	objs := render(t, readValues(t, filepath.Join(ChartName, "ci", "prometheus-values.yaml")))
	d := mustFind(t, objs, "Deployment", "ballast-load-watcher").typed.(*appsv1.Deployment)
	args := d.Spec.Template.Spec.Containers[0].Args
	for _, want := range []string{
		"--provider=prometheus",
		"--prometheus-address=http://prometheus-operated.monitoring.svc:9090",
		"--prometheus-query-set=kube-prometheus",
		"--prometheus-bearer-token-file=/etc/ballast/prometheus-token/token",
		"--prometheus-allow-insecure-bearer-token=true",
		"--prometheus-max-response-bytes=4194304",
		"--listen-address=:2020",
		"--windows=1m,5m,15m",
	} {
		if !contains(args, want) {
			t.Errorf("load-watcher args lack %s: %v", want, args)
		}
	}
	if hasPrefixArg(args, "--metrics-server-timeout") {
		t.Errorf("load-watcher on Prometheus gets metrics-server's flags: %v", args)
	}
	cr := mustFind(t, objs, "ClusterRole", "ballast-load-watcher")
	if strings.Contains(mustYAML(t, cr.raw), "metrics.k8s.io") {
		t.Error("load-watcher on Prometheus still gets metrics.k8s.io access")
	}
	for _, name := range []string{"ballast-load-watcher", "ballast-scheduler", "ballast-descheduler"} {
		mustFind(t, objs, "ServiceMonitor", name)
	}
	dash := mustFind(t, objs, "ConfigMap", "ballast-dashboard").typed.(*corev1.ConfigMap)
	if dash.Namespace != "monitoring" || !strings.Contains(dash.Data["ballast.json"], `"uid": "ballast-overview"`) {
		t.Errorf("dashboard ConfigMap in %q without the dashboard", dash.Namespace)
	}
}

func TestLoadWatcherMetricsServerArgs(t *testing.T) {
	for values, want := range map[string]string{
		``: "--metrics-server-timeout=10s",
		`load-watcher: {metricsServer: {timeout: 2500ms}}`: "--metrics-server-timeout=2500ms",
	} {
		args := deployment(t, render(t, valuesFromYAML(t, values)), "ballast-load-watcher").Spec.Template.Spec.Containers[0].Args
		if !contains(args, want) || hasPrefixArg(args, "--prometheus-") {
			t.Errorf("values %q: load-watcher args %v, want %s and no Prometheus flag", values, args, want)
		}
	}
}

func TestRenderFailsOnInconsistentValues(t *testing.T) {
	cases := []struct {
		name, values, wantErr string
	}{
		{"several schedulers without leader election", `scheduler: {replicas: 2, leaderElection: {enabled: false}}`, "scheduler.replicas > 1 requires"},
		{"several deschedulers without leader election", `descheduler: {replicas: 2, leaderElection: {enabled: false}}`, "descheduler.replicas > 1 requires"},
		{"prometheus without address", `load-watcher: {provider: prometheus}`, "load-watcher.prometheus.address is required"},
		{"prometheus token over plain http", `load-watcher: {provider: prometheus, prometheus: {address: "http://prom:9090", bearerTokenSecret: {name: reader}}}`,
			"load-watcher.prometheus.allowInsecureBearerToken=true"},
		{"window load-watcher does not keep", `scheduler: {plugins: {loadAware: {window: 30m}}}`, "scheduler.plugins.loadAware.window=30m"},
		{"descheduler window load-watcher does not keep", `descheduler: {loadAwareBalance: {window: 2m}}`, "descheduler.loadAwareBalance.window=2m"},
		{"low threshold above high", `descheduler: {loadAwareBalance: {lowThresholds: {cpu: 90}}}`, "highThresholds.cpu (80) must be above lowThresholds.cpu (90)"},
		{"descheduler hot above the scheduler's threshold", `descheduler: {loadAwareBalance: {highThresholds: {memory: 95}}}`,
			"descheduler.loadAwareBalance.highThresholds.memory (95) must be at most scheduler.plugins.loadAware.thresholds.memory (90)"},
		{"scheduler's threshold under the descheduler's", `scheduler: {plugins: {loadAware: {thresholds: {cpu: 70}}}}`,
			"descheduler.loadAwareBalance.highThresholds.cpu (80) must be at most scheduler.plugins.loadAware.thresholds.cpu (70)"},
		{"second scheduler named default-scheduler", `scheduler: {schedulerName: default-scheduler}`, "must not be default-scheduler"},
		{"no plugin", `scheduler: {plugins: {loadAware: {enabled: false}, loadVariationRiskBalancing: {enabled: false}, podCountBalance: {enabled: false}}}`, "enable at least one Ballast plugin"},
		{"descheduler without a profile", `descheduler: {loadAwareBalance: {enabled: false}, spreadReplicas: {enabled: false}}`, "enable descheduler.loadAwareBalance or descheduler.spreadReplicas, or add descheduler.extraProfiles"},
		{"no load-watcher at all", `load-watcher: {enabled: false}`, "needs global.loadWatcher.address"},
		{"descheduler behind a renamed scheduler", `scheduler: {schedulerName: lab-scheduler}`,
			"descheduler.schedulerNames=[ballast-scheduler] must list the profiles of Ballast's scheduler, [lab-scheduler]"},
		{"descheduler missing an extra profile", `scheduler: {extraProfiles: [{schedulerName: batch}]}`,
			"must list the profiles of Ballast's scheduler, [ballast-scheduler batch]"},
		{"descheduler moving the cluster scheduler's pods", `descheduler: {schedulerNames: [ballast-scheduler, default-scheduler]}`,
			"descheduler.schedulerNames must not list default-scheduler"},
		{"descheduler moving pods of the bootstrap scheduler", `{global: {schedulerMode: replaceDefault}, descheduler: {schedulerNames: [ballast-scheduler, ballast-bootstrap]}}`,
			"must not list global.bootstrapSchedulerName (ballast-bootstrap)"},
		{"TLS without a Secret", `global: {loadWatcher: {tls: {enabled: true}}}`, "global.loadWatcher.tls.secretName is required"},
		{"TLS with an http address", `global: {loadWatcher: {address: "http://lw.example:2020", tls: {enabled: true, secretName: s}}}`, "must be an https:// URL"},
		{"metrics on the API port", `{global: {loadWatcher: {port: 9000}}, load-watcher: {metricsPort: 9000}}`, "load-watcher.metricsPort must differ"},
		{"statistic where it used to be", `scheduler: {plugins: {loadAware: {thresholdStatistics: {memory: P95}}}}`,
			"scheduler.plugins.loadAware.thresholdStatistics has moved to global.thresholdStatistics"},
		{"unknown statistic", `global: {thresholdStatistics: {memory: Median}}`, "thresholdStatistics"},
		{"two label selectors", `descheduler: {labelSelector: {matchLabels: {a: b}}, defaultEvictor: {labelSelector: {matchLabels: {c: d}}}}`,
			"set descheduler.labelSelector or descheduler.defaultEvictor.labelSelector, not both"},
		{"replaceDefault without Ballast's scheduler", `{global: {schedulerMode: replaceDefault}, scheduler: {enabled: false}}`,
			"global.schedulerMode=replaceDefault with scheduler.enabled=false"},
		{"replaceDefault with no scheduler replica", `{global: {schedulerMode: replaceDefault}, scheduler: {replicas: 0}}`,
			"scheduler.replicas=0 with scheduler.enabled=true runs no scheduler: the cluster's own scheduler is renamed"},
		{"opt-in with no scheduler replica", `scheduler: {replicas: 0}`, "scheduler.replicas=0 with scheduler.enabled=true runs no scheduler"},
		{"no load-watcher replica behind its readers", `load-watcher: {replicas: 0}`, "load-watcher.replicas=0 with load-watcher.enabled=true"},
		{"no descheduler replica", `descheduler: {replicas: 0}`, "descheduler.replicas=0 with descheduler.enabled=true"},
		{"load-watcher stale between two samples", `load-watcher: {staleAfter: 10s}`, "load-watcher.staleAfter=10s must be longer than load-watcher.period=15s"},
		{"scheduler's usage stale between two samples", `scheduler: {loadWatcherStaleAfter: 15s}`,
			"scheduler.loadWatcherStaleAfter=15s must be longer than load-watcher.period=15s"},
		{"scheduler's staleness from its extra flags", `scheduler: {extraArgs: [--load-watcher-stale-after, 5s]}`,
			"scheduler.extraArgs (--load-watcher-stale-after)=5s must be longer than load-watcher.period=15s"},
		{"load-watcher's period from its extra flags", `load-watcher: {staleAfter: 20s, extraArgs: [--period=30s]}`,
			"load-watcher.staleAfter=20s must be longer than load-watcher.extraArgs (--period)=30s"},
		{"descheduler's usage stale between two samples", `{load-watcher: {period: 90s, windows: [5m, 15m]}, scheduler: {loadWatcherStaleAfter: 5m}}`,
			"load-watcher.period=90s must be shorter than the descheduler's staleness limit, 90s"},
		{"memory limit below the request", `scheduler: {resources: {requests: {memory: 1Gi}, limits: {memory: 128Mi}}}`,
			"scheduler.resources.requests.memory=1Gi is above scheduler.resources.limits.memory=128Mi"},
		{"cpu limit below the request", `descheduler: {resources: {requests: {cpu: 0.6}, limits: {cpu: 500m}}}`,
			"descheduler.resources.requests.cpu=0.6 is above descheduler.resources.limits.cpu=500m"},
		{"memory in an exponent above its limit", `load-watcher: {resources: {requests: {memory: 2e9}, limits: {memory: 1Gi}}}`,
			"load-watcher.resources.requests.memory=2e+09 is above load-watcher.resources.limits.memory=1Gi"},
		{"extended resource without a limit", `scheduler: {resources: {requests: {example.com/gpu: 1}}}`,
			"scheduler.resources.requests.example.com/gpu needs scheduler.resources.limits.example.com/gpu"},
		{"selector label among the pod labels", `load-watcher: {podLabels: {app.kubernetes.io/instance: other}}`,
			"load-watcher.podLabels must not set app.kubernetes.io/instance"},
		{"Ballast's own label among the common labels", `global: {commonLabels: {app.kubernetes.io/name: ballast}}`,
			"global.commonLabels must not set app.kubernetes.io/name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Render(context.Background(), RenderOptions{Values: valuesFromYAML(t, tc.values)})
			if err == nil {
				t.Fatal("rendered without error")
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
		})
	}
}

// deschedulerPolicy decodes the rendered DeschedulerPolicy and returns each
// plugin's args by profile and plugin name.
func deschedulerPolicy(t *testing.T, objs []object) map[string]map[string]map[string]any {
	t.Helper()
	cm := mustFind(t, objs, "ConfigMap", "ballast-descheduler").typed.(*corev1.ConfigMap)
	var policy struct {
		Profiles []struct {
			Name         string `json:"name"`
			PluginConfig []struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"pluginConfig"`
		} `json:"profiles"`
	}
	if err := yaml.Unmarshal([]byte(cm.Data["policy.yaml"]), &policy); err != nil {
		t.Fatalf("descheduler policy does not decode: %v\n%s", err, cm.Data["policy.yaml"])
	}
	out := map[string]map[string]map[string]any{}
	for _, p := range policy.Profiles {
		out[p.Name] = map[string]map[string]any{}
		for _, pc := range p.PluginConfig {
			out[p.Name][pc.Name] = pc.Args
		}
	}
	return out
}

// Both Ballast plugins get the same scope: the pods Ballast's scheduler
// places again, in the namespaces and with the labels the values allow.
func TestDeschedulerScope(t *testing.T) {
	second := []any{"ballast-scheduler"}
	system := map[string]any{"exclude": []any{"kube-system", DefaultNamespace}}
	tests := []struct {
		name               string
		values             string
		wantSchedulerNames []any
		wantNamespaces     map[string]any
		wantLabelSelector  any
	}{
		{name: "defaults: second mode, kube-system and Ballast's namespace excluded",
			wantSchedulerNames: second, wantNamespaces: system},
		{name: "replaceDefault mode adds default-scheduler, never the bootstrap scheduler",
			values:             `global: {schedulerMode: replaceDefault}`,
			wantSchedulerNames: []any{"ballast-scheduler", "default-scheduler"}, wantNamespaces: system},
		{name: "a renamed scheduler with an extra profile",
			values: `{scheduler: {schedulerName: lab, extraProfiles: [{schedulerName: batch}]},
			          descheduler: {schedulerNames: [lab, batch]}}`,
			wantSchedulerNames: []any{"lab", "batch"}, wantNamespaces: system},
		{name: "only included namespaces",
			values:             `descheduler: {namespaces: {include: [apps, web]}}`,
			wantSchedulerNames: second, wantNamespaces: map[string]any{"include": []any{"apps", "web"}}},
		{name: "excluded namespaces add to the system ones",
			values:             `{global: {namespaceOverride: ballast}, descheduler: {namespaces: {exclude: [batch, kube-system]}}}`,
			wantSchedulerNames: second, wantNamespaces: map[string]any{"exclude": []any{"kube-system", "ballast", "batch"}}},
		{name: "a label selector guards the Ballast profile",
			values: `descheduler: {labelSelector: {matchLabels: {tier: web},
			          matchExpressions: [{key: ballast.io/pinned, operator: DoesNotExist}]}}`,
			wantSchedulerNames: second, wantNamespaces: system,
			wantLabelSelector: map[string]any{
				"matchLabels":      map[string]any{"tier": "web"},
				"matchExpressions": []any{map[string]any{"key": "ballast.io/pinned", "operator": "DoesNotExist"}},
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			policy := deschedulerPolicy(t, render(t, valuesFromYAML(t, tc.values)))
			ballast := policy["ballast"]
			for _, plugin := range []string{"LoadAwareBalance", "SpreadReplicas"} {
				args := ballast[plugin]
				if diff := cmp.Diff(tc.wantSchedulerNames, args["schedulerNames"]); diff != "" {
					t.Errorf("%s schedulerNames (-want,+got):\n%s", plugin, diff)
				}
				if diff := cmp.Diff(tc.wantNamespaces, args["namespaces"]); diff != "" {
					t.Errorf("%s namespaces (-want,+got):\n%s", plugin, diff)
				}
			}
			if diff := cmp.Diff(tc.wantLabelSelector, ballast["DefaultEvictor"]["labelSelector"]); diff != "" {
				t.Errorf("DefaultEvictor labelSelector (-want,+got):\n%s", diff)
			}
		})
	}
}

// The scope is added to each plugin's own args, not shared between them,
// and upstream strategies in extraProfiles are left as written.
func TestDeschedulerScopeLeavesOtherArgsAlone(t *testing.T) {
	policy := deschedulerPolicy(t, render(t, valuesFromYAML(t, `
descheduler:
  labelSelector: {matchLabels: {tier: web}}
  extraProfiles:
    - name: upstream
      pluginConfig:
        - name: RemoveDuplicates
      plugins:
        balance: {enabled: [RemoveDuplicates]}`)))
	want := map[string]any{
		"highThresholds":           map[string]any{"cpu": float64(80), "memory": float64(85)},
		"evictionCooldown":         "10m",
		"balanceCooldown":          "1h",
		"memoryGrowthPerMinute":    "1Mi",
		"maxEvictionsPerNode":      float64(5),
		"maxEvictionsPerNamespace": float64(5),
		"maxEvictionsPerCycle":     float64(5),
		"window":                   "5m",
		"schedulerNames":           []any{"ballast-scheduler"},
		"namespaces":               map[string]any{"exclude": []any{"kube-system", DefaultNamespace}},
		"thresholdStatistics":      map[string]any{"cpu": "Average", "memory": "Latest"},
	}
	if diff := cmp.Diff(want, policy["ballast"]["SpreadReplicas"]); diff != "" {
		t.Errorf("SpreadReplicas args (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]map[string]any{"RemoveDuplicates": nil}, policy["upstream"]); diff != "" {
		t.Errorf("extra profile (-want,+got):\n%s", diff)
	}
}

// One statistic setting reaches the scheduler's LoadAware and both
// descheduler plugins, so the two components call the same node hot.
func TestThresholdStatisticsReachBothComponents(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		want         map[string]any
	}{
		{name: "defaults", want: map[string]any{"cpu": "Average", "memory": "Latest"}},
		{name: "memory on p95", values: `global: {thresholdStatistics: {memory: P95}}`, want: map[string]any{"cpu": "Average", "memory": "P95"}},
		{name: "both on the mean", values: `global: {thresholdStatistics: {cpu: Average, memory: Average}}`, want: map[string]any{"cpu": "Average", "memory": "Average"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, valuesFromYAML(t, tc.values))
			cfg := schedulerConfig(t, objs)
			var got map[string]any
			for _, pc := range cfg.Profiles[0].PluginConfig {
				if pc.Name != "LoadAware" {
					continue
				}
				args := map[string]any{}
				if err := yaml.Unmarshal(pc.Args.Raw, &args); err != nil {
					t.Fatal(err)
				}
				got, _ = args["thresholdStatistics"].(map[string]any)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("LoadAware thresholdStatistics (-want,+got):\n%s", diff)
			}
			policy := deschedulerPolicy(t, objs)
			for _, plugin := range []string{"LoadAwareBalance", "SpreadReplicas"} {
				if diff := cmp.Diff(tc.want, policy["ballast"][plugin]["thresholdStatistics"]); diff != "" {
					t.Errorf("%s thresholdStatistics (-want,+got):\n%s", plugin, diff)
				}
			}
		})
	}
}

func TestDeviationThresholds(t *testing.T) {
	policy := deschedulerPolicy(t, render(t, nil))
	if diff := cmp.Diff(map[string]any{"cpu": float64(10), "memory": float64(10)}, policy["ballast"]["LoadAwareBalance"]["deviationThresholds"]); diff != "" {
		t.Errorf("default deviationThresholds (-want,+got):\n%s", diff)
	}
	policy = deschedulerPolicy(t, render(t, valuesFromYAML(t, `descheduler: {loadAwareBalance: {deviationThresholds: {cpu: 20, memory: 25}}}`)))
	if diff := cmp.Diff(map[string]any{"cpu": float64(20), "memory": float64(25)}, policy["ballast"]["LoadAwareBalance"]["deviationThresholds"]); diff != "" {
		t.Errorf("deviationThresholds (-want,+got):\n%s", diff)
	}
	// null turns balancing around the mean off: the plugin reads no deviation.
	policy = deschedulerPolicy(t, render(t, valuesFromYAML(t, `descheduler: {loadAwareBalance: {deviationThresholds: null}}`)))
	if got := policy["ballast"]["LoadAwareBalance"]["deviationThresholds"]; got != nil {
		t.Errorf("deviationThresholds with null = %v, want none", got)
	}
}

func TestNotesExplainOptIn(t *testing.T) {
	_, notes, err := Render(context.Background(), RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"schedulerName: ballast-scheduler", "ballast status", "/api/v1/usage"} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func mustYAML(t *testing.T, v any) string {
	t.Helper()
	out, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// The policy caps evictions per cycle across every profile, extraProfiles
// included: the plugins' own caps count per plugin.
func TestPolicyCapsEvictionsAcrossProfiles(t *testing.T) {
	for _, tc := range []struct {
		values string
		want   float64
	}{
		{values: "", want: 5},
		{values: "descheduler: {maxEvictionsPerCycle: 2, extraProfiles: [{name: upstream, pluginConfig: [], plugins: {}}]}", want: 2},
	} {
		objs := render(t, valuesFromYAML(t, tc.values))
		cm := mustFind(t, objs, "ConfigMap", "ballast-descheduler").typed.(*corev1.ConfigMap)
		policy := map[string]any{}
		if err := yaml.Unmarshal([]byte(cm.Data["policy.yaml"]), &policy); err != nil {
			t.Fatal(err)
		}
		if got := policy["maxNoOfPodsToEvictTotal"]; got != tc.want {
			t.Errorf("values %q: maxNoOfPodsToEvictTotal = %v, want %v", tc.values, got, tc.want)
		}
	}
}

func TestSchedulerAndDeschedulerReadPodMetricsOnly(t *testing.T) {
	objs := render(t, map[string]any{})
	// The scheduler asks about one pod at a time; the descheduler lists
	// every pod's usage once per sampling period.
	for name, verbs := range map[string]string{"ballast-scheduler": "get", "ballast-descheduler": "get,list"} {
		cr := mustFind(t, objs, "ClusterRole", name).typed.(*rbacv1.ClusterRole)
		var found bool
		for _, r := range cr.Rules {
			if !contains(r.APIGroups, "metrics.k8s.io") {
				continue
			}
			found = true
			if strings.Join(r.Resources, ",") != "pods" || strings.Join(r.Verbs, ",") != verbs {
				t.Errorf("%s: metrics.k8s.io rule %v on %v, want %s on pods only", name, r.Verbs, r.Resources, verbs)
			}
		}
		if !found {
			t.Errorf("%s cannot read pods.metrics.k8s.io: pods would be estimated by their requests only", name)
		}
	}
}

// TestDeschedulerPredictsTheRenderedScheduler checks that the descheduler
// is handed the very configuration the scheduler runs: the scheduler's
// ConfigMap mounted where --scheduler-config points, the profile it serves
// named by --scheduler-profile, and the settings read from it as the
// descheduler reads them are the values'.
func TestDeschedulerPredictsTheRenderedScheduler(t *testing.T) {
	for _, tc := range []struct {
		name, values, profile string
		memory                float64
	}{
		{name: "defaults", profile: "ballast-scheduler", memory: 90},
		{name: "renamed scheduler, own thresholds", profile: "lab",
			values: `{scheduler: {schedulerName: lab, plugins: {loadAware: {thresholds: {cpu: 85, memory: 88}}}}, descheduler: {schedulerNames: [lab]}}`, memory: 88},
		{name: "replaceDefault", profile: "ballast-scheduler", values: `global: {schedulerMode: replaceDefault}`, memory: 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, valuesFromYAML(t, tc.values))
			d := deployment(t, objs, "ballast-descheduler")
			c := d.Spec.Template.Spec.Containers[0]
			var file, profile string
			for _, a := range c.Args {
				if v, ok := strings.CutPrefix(a, "--scheduler-config="); ok {
					file = v
				}
				if v, ok := strings.CutPrefix(a, "--scheduler-profile="); ok {
					profile = v
				}
			}
			if profile != tc.profile {
				t.Errorf("--scheduler-profile=%q, want %q", profile, tc.profile)
			}
			var mountedFrom string
			for _, m := range c.VolumeMounts {
				if file != "" && path.Dir(file) == m.MountPath {
					for _, v := range d.Spec.Template.Spec.Volumes {
						if v.Name == m.Name && v.ConfigMap != nil {
							mountedFrom = v.ConfigMap.Name
							if !m.ReadOnly {
								t.Errorf("the scheduler's configuration is mounted writable")
							}
						}
					}
				}
			}
			cm := mustFind(t, objs, "ConfigMap", mountedFrom).typed.(*corev1.ConfigMap)
			data, ok := cm.Data[path.Base(file)]
			if !ok || cm.Name != "ballast-scheduler" {
				t.Fatalf("--scheduler-config=%q is not the scheduler's ConfigMap (mounted from %q)", file, mountedFrom)
			}
			settings, found, err := loadmodel.SchedulerSettings([]byte(data), profile)
			if err != nil || !found {
				t.Fatalf("the descheduler reads no LoadAware settings for %q: found %v, %v", profile, found, err)
			}
			if got := settings.Thresholds[usage.Memory]; got != tc.memory {
				t.Errorf("the descheduler predicts a memory threshold of %v, the values say %v", got, tc.memory)
			}
		})
	}
}

// TestSurgeSingleReplica: off by default, the descheduler may not patch
// Deployments; on, the plugin gets the arg and the descheduler the right to
// patch Deployments and nothing else more.
func TestSurgeSingleReplica(t *testing.T) {
	canPatch := func(objs []object) bool {
		cr := mustFind(t, objs, "ClusterRole", "ballast-descheduler").typed.(*rbacv1.ClusterRole)
		for _, r := range cr.Rules {
			if contains(r.Verbs, "patch") && contains(r.APIGroups, "apps") {
				if strings.Join(r.Resources, ",") != "deployments" || strings.Join(r.Verbs, ",") != "patch" {
					t.Errorf("descheduler rule %v on %v: want patch on deployments only", r.Verbs, r.Resources)
				}
				return true
			}
		}
		return false
	}
	objs := render(t, nil)
	if got := deschedulerPolicy(t, objs)["ballast"]["LoadAwareBalance"]["surgeSingleReplica"]; got != false {
		t.Errorf("default surgeSingleReplica = %v, want false", got)
	}
	if canPatch(objs) {
		t.Error("by default the descheduler may patch Deployments")
	}
	objs = render(t, valuesFromYAML(t, `descheduler: {loadAwareBalance: {surgeSingleReplica: true}}`))
	if got := deschedulerPolicy(t, objs)["ballast"]["LoadAwareBalance"]["surgeSingleReplica"]; got != true {
		t.Errorf("surgeSingleReplica = %v, want true", got)
	}
	if !canPatch(objs) {
		t.Error("with surgeSingleReplica the descheduler cannot patch Deployments to roll them out")
	}
	// A workload's only pod gets through the evictor, for the plugin to
	// move it by a rollout or not at all.
	if got := deschedulerPolicy(t, objs)["ballast"]["DefaultEvictor"]["minReplicas"]; got != float64(1) {
		t.Errorf("DefaultEvictor minReplicas with surgeSingleReplica = %v, want 1", got)
	}
	if got := deschedulerPolicy(t, render(t, nil))["ballast"]["DefaultEvictor"]["minReplicas"]; got != float64(2) {
		t.Errorf("DefaultEvictor minReplicas by default = %v, want 2", got)
	}
	_, _, err := Render(context.Background(), RenderOptions{Values: valuesFromYAML(t, `descheduler: {loadAwareBalance: {surgeSingleReplica: true}, defaultEvictor: {minReplicas: 3}}`)})
	if err == nil || !strings.Contains(err.Error(), "descheduler.defaultEvictor.minReplicas") {
		t.Errorf("surgeSingleReplica with minReplicas 3: %v, want a refusal naming descheduler.defaultEvictor.minReplicas", err)
	}
}
