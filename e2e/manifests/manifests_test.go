package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	psaapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"
)

// scheme knows every kind the manifests use.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientscheme.AddToScheme(s))
	utilruntime.Must(apiregistrationv1.AddToScheme(s))
	return s
}()

// decode reads every object of a multi-document manifest strictly: an
// unknown or duplicate field is an error, as it is for `kubectl apply
// --validate=strict`.
func decode(t *testing.T, manifest []byte) []runtime.Object {
	t.Helper()
	dec := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(manifest)))
	var objs []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) == 0 {
			continue
		}
		obj, _, err := dec.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("decoding %q: %v", firstLines(doc), err)
		}
		objs = append(objs, obj)
	}
}

func TestManifests(t *testing.T) {
	tests := []struct {
		name     string
		manifest []byte
		image    string
		// wantKinds lists the kinds in the order of the file.
		wantKinds []string
	}{
		{
			name:     "coredns",
			manifest: CoreDNS,
			image:    "ballast.local/e2e/coredns:e2e",
			wantKinds: []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap",
				"Deployment", "Service"},
		},
		{
			name:     "metrics-server",
			manifest: MetricsServer,
			image:    "ballast.local/e2e/metrics-server:e2e",
			wantKinds: []string{"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ClusterRole",
				"ClusterRoleBinding", "RoleBinding", "Deployment", "Service", "APIService"},
		},
	}
	evaluator, err := policy.NewEvaluator(policy.DefaultChecks(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := decode(t, tt.manifest)
			var kinds []string
			var deployments []*appsv1.Deployment
			var services []*corev1.Service
			for _, o := range objs {
				kinds = append(kinds, kindOf(o))
				switch o := o.(type) {
				case *appsv1.Deployment:
					deployments = append(deployments, o)
				case *corev1.Service:
					services = append(services, o)
				}
			}
			if strings.Join(kinds, ",") != strings.Join(tt.wantKinds, ",") {
				t.Errorf("kinds %v, want %v", kinds, tt.wantKinds)
			}
			if len(deployments) != 1 {
				t.Fatalf("%d Deployments, want 1", len(deployments))
			}
			d := deployments[0]
			pod := d.Spec.Template

			sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
			if err != nil || !sel.Matches(labels.Set(pod.Labels)) {
				t.Errorf("Deployment selector %v does not match its pod labels %v (%v)", d.Spec.Selector, pod.Labels, err)
			}
			for _, c := range pod.Spec.Containers {
				if c.Image != tt.image || c.ImagePullPolicy != corev1.PullNever {
					t.Errorf("container %s runs %s (pull %s), want %s (pull Never)", c.Name, c.Image, c.ImagePullPolicy, tt.image)
				}
			}
			lv := psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}
			if r := policy.AggregateCheckResults(evaluator.EvaluatePod(lv, &pod.ObjectMeta, &pod.Spec)); !r.Allowed {
				t.Errorf("pod is not restricted: %s", r.ForbiddenDetail())
			}

			for _, s := range services {
				if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
					t.Errorf("Service %s selects %v, not the pods (%v)", s.Name, s.Spec.Selector, pod.Labels)
				}
				for _, p := range s.Spec.Ports {
					if !hasPort(pod.Spec, p) {
						t.Errorf("Service %s port %s targets %s/%s, which no container exposes", s.Name, p.Name, p.TargetPort.String(), p.Protocol)
					}
				}
			}
		})
	}
}

func TestKubeDNSService(t *testing.T) {
	for _, o := range decode(t, CoreDNS) {
		s, ok := o.(*corev1.Service)
		if !ok {
			continue
		}
		if s.Name != "kube-dns" || s.Namespace != "kube-system" || s.Spec.ClusterIP != "10.96.0.10" {
			t.Errorf("Service %s/%s on %s, want kube-system/kube-dns on 10.96.0.10", s.Namespace, s.Name, s.Spec.ClusterIP)
		}
		var ports []string
		for _, p := range s.Spec.Ports {
			ports = append(ports, string(p.Protocol)+"/"+p.TargetPort.String())
			if p.Port != 53 {
				t.Errorf("port %s is %d, want 53", p.Name, p.Port)
			}
		}
		if got := strings.Join(ports, ","); got != "UDP/dns,TCP/dns-tcp" {
			t.Errorf("ports %s, want UDP/dns,TCP/dns-tcp", got)
		}
	}
}

// hasPort reports whether a container of spec exposes the Service port p's
// target, by name or number, with p's protocol.
func hasPort(spec corev1.PodSpec, p corev1.ServicePort) bool {
	for _, c := range spec.Containers {
		for _, cp := range c.Ports {
			if cp.Protocol != p.Protocol {
				continue
			}
			if p.TargetPort.StrVal != "" && cp.Name == p.TargetPort.StrVal ||
				p.TargetPort.StrVal == "" && cp.ContainerPort == p.TargetPort.IntVal {
				return true
			}
		}
	}
	return false
}

func kindOf(o runtime.Object) string {
	gvks, _, err := scheme.ObjectKinds(o)
	if err != nil || len(gvks) == 0 {
		return "?"
	}
	return gvks[0].Kind
}

func stripComments(doc []byte) []byte {
	var out [][]byte
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) {
			out = append(out, l)
		}
	}
	return bytes.Join(out, []byte("\n"))
}

func firstLines(doc []byte) string {
	lines := strings.SplitN(string(stripComments(doc)), "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], " ")
}
