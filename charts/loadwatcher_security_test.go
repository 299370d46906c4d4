package charts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func networkPolicy(t *testing.T, objs []object) *networkingv1.NetworkPolicy {
	t.Helper()
	np, ok := mustFind(t, objs, "NetworkPolicy", "ballast-load-watcher").typed.(*networkingv1.NetworkPolicy)
	if !ok {
		t.Fatal("NetworkPolicy did not decode as networking.k8s.io/v1")
	}
	return np
}

func deployment(t *testing.T, objs []object, name string) *appsv1.Deployment {
	t.Helper()
	return mustFind(t, objs, "Deployment", name).typed.(*appsv1.Deployment)
}

// selects reports whether a NetworkPolicyPeer's pod selector matches the
// pods of d (and, having no namespace selector, d's namespace is the policy's).
func selects(t *testing.T, peer networkingv1.NetworkPolicyPeer, d *appsv1.Deployment) bool {
	t.Helper()
	if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil {
		return false
	}
	sel, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	return sel.Matches(labels.Set(d.Spec.Template.Labels))
}

func TestNetworkPolicyAdmitsOnlySchedulerAndDeschedulerToTheAPI(t *testing.T) {
	objs := render(t, nil)
	np := networkPolicy(t, objs)
	lw := deployment(t, objs, "ballast-load-watcher")
	if np.Namespace != lw.Namespace {
		t.Errorf("policy in %s, load-watcher in %s", np.Namespace, lw.Namespace)
	}
	if sel, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector); !sel.Matches(labels.Set(lw.Spec.Template.Labels)) {
		t.Errorf("policy selects %v, not the load-watcher pods %v", np.Spec.PodSelector, lw.Spec.Template.Labels)
	}
	if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes); diff != "" {
		t.Errorf("policyTypes (-want,+got):\n%s", diff)
	}
	if len(np.Spec.Ingress) != 1 {
		t.Fatalf("%d ingress rules, want one (the API; metrics stay closed by default): %+v", len(np.Spec.Ingress), np.Spec.Ingress)
	}
	rule := np.Spec.Ingress[0]
	if len(rule.Ports) != 1 || rule.Ports[0].Port == nil || rule.Ports[0].Port.String() != "http" {
		t.Errorf("API rule ports = %+v, want the named port http", rule.Ports)
	}
	checkNamedPort(t, lw, "http", 2020)
	checkNamedPort(t, lw, "metrics", 2021)
	if len(rule.From) != 2 {
		t.Fatalf("API rule admits %d peers, want the scheduler and the descheduler", len(rule.From))
	}
	for i, name := range []string{"ballast-scheduler", "ballast-descheduler"} {
		if !selects(t, rule.From[i], deployment(t, objs, name)) {
			t.Errorf("peer %d %+v does not select the %s pods", i, rule.From[i], name)
		}
		if selects(t, rule.From[i], lw) {
			t.Errorf("peer %d selects load-watcher itself", i)
		}
	}
	// Another release in the same namespace is not admitted.
	other := render(t, nil)
	for _, o := range other {
		if d, ok := o.typed.(*appsv1.Deployment); ok && d.Name == "ballast-scheduler" {
			d.Spec.Template.Labels["app.kubernetes.io/instance"] = "other"
			if selects(t, rule.From[0], d) {
				t.Error("the scheduler of another release is admitted")
			}
		}
	}
}

func checkNamedPort(t *testing.T, d *appsv1.Deployment, name string, want int32) {
	t.Helper()
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == name {
			if p.ContainerPort != want {
				t.Errorf("port %s = %d, want %d", name, p.ContainerPort, want)
			}
			return
		}
	}
	t.Errorf("load-watcher has no port named %s", name)
}

func TestNetworkPolicyMetricsPeers(t *testing.T) {
	prom := `{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}, podSelector: {matchLabels: {app.kubernetes.io/name: prometheus}}}`
	t.Run("listed peers reach the metrics port only", func(t *testing.T) {
		np := networkPolicy(t, render(t, valuesFromYAML(t, `load-watcher: {networkPolicy: {metricsFrom: [`+prom+`]}}`)))
		if len(np.Spec.Ingress) != 2 {
			t.Fatalf("%d ingress rules, want the API and metrics", len(np.Spec.Ingress))
		}
		m := np.Spec.Ingress[1]
		if len(m.Ports) != 1 || m.Ports[0].Port.String() != "metrics" {
			t.Errorf("metrics rule ports = %+v", m.Ports)
		}
		if len(m.From) != 1 || m.From[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "monitoring" ||
			m.From[0].PodSelector.MatchLabels["app.kubernetes.io/name"] != "prometheus" {
			t.Errorf("metrics rule peers = %+v", m.From)
		}
	})
	t.Run("a ServiceMonitor without peers opens metrics to all, not the API", func(t *testing.T) {
		np := networkPolicy(t, render(t, valuesFromYAML(t, `load-watcher: {serviceMonitor: {enabled: true}}`)))
		if len(np.Spec.Ingress) != 2 || np.Spec.Ingress[1].From != nil || np.Spec.Ingress[1].Ports[0].Port.String() != "metrics" {
			t.Errorf("ingress = %+v, want the API rule and an open metrics rule", np.Spec.Ingress)
		}
		if len(np.Spec.Ingress[0].From) != 2 {
			t.Errorf("the API rule changed: %+v", np.Spec.Ingress[0])
		}
	})
	t.Run("more API peers", func(t *testing.T) {
		np := networkPolicy(t, render(t, valuesFromYAML(t, `load-watcher: {networkPolicy: {apiFrom: [{ipBlock: {cidr: 10.0.0.0/24}}]}}`)))
		if from := np.Spec.Ingress[0].From; len(from) != 3 || from[2].IPBlock == nil || from[2].IPBlock.CIDR != "10.0.0.0/24" {
			t.Errorf("API peers = %+v, want the scheduler, the descheduler and the ipBlock", from)
		}
	})
}

func TestNetworkPolicyCanBeDisabled(t *testing.T) {
	objs := render(t, valuesFromYAML(t, `load-watcher: {networkPolicy: {enabled: false}}`))
	if _, ok := find(objs, "NetworkPolicy", "ballast-load-watcher"); ok {
		t.Error("NetworkPolicy rendered although disabled")
	}
	if objs := render(t, valuesFromYAML(t, `{load-watcher: {enabled: false}, global: {loadWatcher: {address: "http://lw.example:2020"}}}`)); len(objs) > 0 {
		if _, ok := find(objs, "NetworkPolicy", "ballast-load-watcher"); ok {
			t.Error("NetworkPolicy rendered without load-watcher")
		}
	}
}

func TestBindPodIP(t *testing.T) {
	c := deployment(t, render(t, nil), "ballast-load-watcher").Spec.Template.Spec.Containers[0]
	if hasPrefixArg(c.Args, "--bind-address") || len(c.Env) != 0 {
		t.Errorf("default binds a single address: args %v env %v", c.Args, c.Env)
	}
	c = deployment(t, render(t, valuesFromYAML(t, `load-watcher: {bindPodIP: true}`)), "ballast-load-watcher").Spec.Template.Spec.Containers[0]
	if !contains(c.Args, "--bind-address=$(POD_IP)") {
		t.Errorf("args %v lack --bind-address=$(POD_IP)", c.Args)
	}
	if len(c.Env) != 1 || c.Env[0].Name != "POD_IP" || c.Env[0].ValueFrom == nil || c.Env[0].ValueFrom.FieldRef == nil ||
		c.Env[0].ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("env = %+v, want POD_IP from status.podIP", c.Env)
	}
}

func TestLoadWatcherTLS(t *testing.T) {
	objs := render(t, valuesFromYAML(t, `global: {loadWatcher: {tls: {enabled: true, secretName: lw-tls}}}`))
	lw := deployment(t, objs, "ballast-load-watcher").Spec.Template.Spec
	c := lw.Containers[0]
	for _, want := range []string{"--tls-cert-file=/etc/ballast/tls/tls.crt", "--tls-private-key-file=/etc/ballast/tls/tls.key"} {
		if !contains(c.Args, want) {
			t.Errorf("load-watcher args lack %s: %v", want, c.Args)
		}
	}
	if c.LivenessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS || c.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("probes not HTTPS: %v %v", c.LivenessProbe.HTTPGet.Scheme, c.ReadinessProbe.HTTPGet.Scheme)
	}
	checkSecretMount(t, lw, "/etc/ballast/tls", "lw-tls", "tls.crt", "tls.key")

	for _, name := range []string{"ballast-scheduler", "ballast-descheduler"} {
		spec := deployment(t, objs, name).Spec.Template.Spec
		args := spec.Containers[0].Args
		for _, want := range []string{
			"--load-watcher-address=https://ballast-load-watcher.ballast-system.svc:2020",
			"--load-watcher-ca-file=/etc/ballast/load-watcher-ca/ca.crt",
		} {
			if !contains(args, want) {
				t.Errorf("%s args lack %s: %v", name, want, args)
			}
		}
		// Only the CA: the private key never leaves load-watcher's pod.
		checkSecretMount(t, spec, "/etc/ballast/load-watcher-ca", "lw-tls", "ca.crt")
	}

	objs = render(t, nil)
	for _, name := range []string{"ballast-scheduler", "ballast-descheduler"} {
		args := deployment(t, objs, name).Spec.Template.Spec.Containers[0].Args
		if hasPrefixArg(args, "--load-watcher-ca-file") || !contains(args, "--load-watcher-address=http://ballast-load-watcher.ballast-system.svc:2020") {
			t.Errorf("%s without TLS: args %v", name, args)
		}
	}
}

// The Prometheus bearer token goes to an https:// address, or to an http://
// one only when the values say so.
func TestPrometheusBearerTokenOverHTTPS(t *testing.T) {
	prom := `load-watcher: {provider: prometheus, prometheus: {address: %q, bearerTokenSecret: {name: reader}, allowInsecureBearerToken: %v}}`
	for _, tt := range []struct {
		address string
		allow   bool
		want    []string
		not     string
	}{
		{address: "https://prom.monitoring:9090", want: []string{"--prometheus-bearer-token-file=/etc/ballast/prometheus-token/token"},
			not: "--prometheus-allow-insecure-bearer-token"},
		{address: "http://prom.monitoring:9090", allow: true, want: []string{"--prometheus-bearer-token-file=/etc/ballast/prometheus-token/token",
			"--prometheus-allow-insecure-bearer-token=true"}},
	} {
		lw := deployment(t, render(t, valuesFromYAML(t, fmt.Sprintf(prom, tt.address, tt.allow))), "ballast-load-watcher").Spec.Template.Spec
		args := lw.Containers[0].Args
		for _, want := range tt.want {
			if !contains(args, want) {
				t.Errorf("%s: args lack %s: %v", tt.address, want, args)
			}
		}
		if tt.not != "" && hasPrefixArg(args, tt.not) {
			t.Errorf("%s: args hold %s: %v", tt.address, tt.not, args)
		}
		checkSecretMount(t, lw, "/etc/ballast/prometheus-token", "reader", "token")
	}
}

// checkSecretMount checks that spec mounts Secret secret read-only at path
// with exactly the keys given.
func checkSecretMount(t *testing.T, spec corev1.PodSpec, path, secret string, keys ...string) {
	t.Helper()
	var volume string
	for _, m := range spec.Containers[0].VolumeMounts {
		if m.MountPath == path {
			volume = m.Name
			if !m.ReadOnly {
				t.Errorf("%s mounted writable", path)
			}
		}
	}
	for _, v := range spec.Volumes {
		if v.Name != volume || volume == "" {
			continue
		}
		if v.Secret == nil || v.Secret.SecretName != secret {
			t.Fatalf("volume %s = %+v, want Secret %s", volume, v.VolumeSource, secret)
		}
		var got []string
		for _, item := range v.Secret.Items {
			got = append(got, item.Key)
		}
		if diff := cmp.Diff(keys, got); diff != "" {
			t.Errorf("keys of %s mounted (-want,+got):\n%s", secret, diff)
		}
		return
	}
	t.Errorf("nothing mounted at %s", path)
}

func hasPrefixArg(args []string, prefix string) bool {
	for _, a := range args {
		if strings.HasPrefix(a, prefix) {
			return true
		}
	}
	return false
}
