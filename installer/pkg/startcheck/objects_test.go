package startcheck

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/ballast-sched/ballast/charts"
)

// rendered returns the objects of the chart rendered with vals.
func rendered(t *testing.T, vals map[string]any) []object {
	t.Helper()
	manifest, _, err := charts.Render(context.Background(), charts.RenderOptions{Values: vals})
	if err != nil {
		t.Fatal(err)
	}
	objs, err := objects(manifest)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func deployment(t *testing.T, objs []object, name string) *appsv1.Deployment {
	t.Helper()
	for _, o := range objs {
		if d, ok := o.typed.(*appsv1.Deployment); ok && d.Name == name {
			return d
		}
	}
	t.Fatalf("no Deployment/%s", name)
	return nil
}

// TestShippedValuesPassTheAPIRules renders the chart's defaults and every
// example values file: nothing is refused.
func TestShippedValuesPassTheAPIRules(t *testing.T) {
	files, err := filepath.Glob("../../../charts/ballast/ci/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example values: %v", err)
	}
	sets := map[string]map[string]any{"defaults": nil}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		vals := map[string]any{}
		if err := yaml.Unmarshal(data, &vals); err != nil {
			t.Fatal(err)
		}
		sets[filepath.Base(f)] = vals
	}
	for name, vals := range sets {
		t.Run(name, func(t *testing.T) {
			manifest, _, err := charts.Render(context.Background(), charts.RenderOptions{Values: vals})
			if err != nil {
				t.Fatal(err)
			}
			refusals, err := Manifest(context.Background(), manifest, ReplaceDefault(vals))
			if err != nil || len(refusals) > 0 {
				t.Errorf("refused: %v %v", refusals, err)
			}
		})
	}
}

// TestAPIRulesOfAPodTemplate changes one field of the rendered scheduler
// Deployment and expects the error the API server (or the kubelet, for an
// image) gives, by type and path.
func TestAPIRulesOfAPodTemplate(t *testing.T) {
	spec := field.NewPath("spec", "template", "spec")
	c0 := spec.Child("containers").Index(0)
	cases := []struct {
		name   string
		change func(d *appsv1.Deployment)
		want   field.ErrorList
	}{
		{"as rendered", func(*appsv1.Deployment) {}, nil},
		{"image tag with a space", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "ghcr.io/ballast-sched/ballast-scheduler:1.0 beta"
		}, field.ErrorList{field.Invalid(c0.Child("image"), nil, "")}},
		{"image with a trailing space", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Image = "ghcr.io/ballast-sched/ballast-scheduler:v1 "
		}, field.ErrorList{field.Invalid(c0.Child("image"), nil, "")}},
		{"memory limit below its request", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Limits[corev1.ResourceMemory] = resource.MustParse("64Mi")
		}, field.ErrorList{field.Invalid(c0.Child("resources", "requests"), nil, "")}},
		{"unknown resource", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Requests["cpus"] = resource.MustParse("1")
		}, field.ErrorList{field.Invalid(c0.Child("resources", "requests").Key("cpus"), nil, "")}},
		{"extended resource without a limit", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].Resources.Requests["example.com/gpu"] = resource.MustParse("1")
		}, field.ErrorList{field.Required(c0.Child("resources", "limits"), "")}},
		{"toleration with an unknown operator", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: "Equals", Value: "b"}}
		}, field.ErrorList{field.NotSupported[string](spec.Child("tolerations").Index(0).Child("operator"), nil, nil)}},
		{"toleration with an unknown effect", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, Effect: "NoSchedul"}}
		}, field.ErrorList{field.NotSupported[string](spec.Child("tolerations").Index(0).Child("effect"), nil, nil)}},
		{"toleration of a comparison, behind an alpha gate", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpLt, Value: "5"}}
		}, field.ErrorList{field.NotSupported[string](spec.Child("tolerations").Index(0).Child("operator"), nil, nil)}},
		{"toleration of every key with Equal", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual}}
		}, field.ErrorList{field.Invalid(spec.Child("tolerations").Index(0).Child("operator"), nil, "")}},
		{"toleration seconds without NoExecute", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Tolerations = []corev1.Toleration{{Key: "a", Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](5)}}
		}, field.ErrorList{field.Invalid(spec.Child("tolerations").Index(0).Child("effect"), nil, "")}},
		{"pod label key with a space", func(d *appsv1.Deployment) {
			d.Spec.Template.Labels["my label"] = "x"
		}, field.ErrorList{field.Invalid(field.NewPath("spec", "template", "metadata", "labels"), nil, "")}},
		{"pod labels the selector does not match", func(d *appsv1.Deployment) {
			d.Spec.Template.Labels["app.kubernetes.io/instance"] = "other"
		}, field.ErrorList{field.Invalid(field.NewPath("spec", "template", "metadata", "labels"), nil, "")}},
		{"node selector value with a space", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.NodeSelector = map[string]string{"tier": "front end"}
		}, field.ErrorList{field.Invalid(spec.Child("nodeSelector"), nil, "")}},
		{"priority class that cannot exist", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.PriorityClassName = "System Critical"
		}, field.ErrorList{field.Invalid(spec.Child("priorityClassName"), nil, "")}},
		{"spread constraint without a topology key", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{MaxSkew: 1, WhenUnsatisfiable: corev1.ScheduleAnyway}}
		}, field.ErrorList{field.Required(spec.Child("topologySpreadConstraints").Index(0).Child("topologyKey"), "")}},
		{"anti-affinity without a topology key", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{}}}}
		}, field.ErrorList{field.Required(spec.Child("affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution").Index(0).Child("topologyKey"), "")}},
		{"mount of a volume the pod does not have", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.Containers[0].VolumeMounts[0].Name = "gone"
		}, field.ErrorList{field.NotFound(c0.Child("volumeMounts").Index(0).Child("name"), nil)}},
		{"seccomp profile of an unknown type", func(d *appsv1.Deployment) {
			d.Spec.Template.Spec.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: "Default"}
		}, field.ErrorList{field.NotSupported[string](spec.Child("securityContext", "seccompProfile", "type"), nil, nil)}},
		{"negative replicas", func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](-1) },
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), nil, "")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := deployment(t, rendered(t, nil), "ballast-scheduler").DeepCopy()
			tc.change(d)
			got := validateObject(object{kind: "Deployment", meta: &d.ObjectMeta, typed: d})
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail", "Origin", "CoveredByDeclarative")); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestAPIRulesOfTheOtherKinds does the same for the chart's other kinds.
func TestAPIRulesOfTheOtherKinds(t *testing.T) {
	objs := rendered(t, nil)
	find := func(kind, name string) object {
		for _, o := range objs {
			if o.kind == kind && o.meta.Name == name {
				return o
			}
		}
		t.Fatalf("no %s/%s", kind, name)
		return object{}
	}
	cases := []struct {
		name   string
		obj    object
		change func(typed any)
		want   field.ErrorList
	}{
		{"Service port out of range", find("Service", "ballast-load-watcher"), func(o any) {
			o.(*corev1.Service).Spec.Ports[0].Port = 70000
		}, field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(0).Child("port"), nil, "")}},
		{"Service target port name too long", find("Service", "ballast-load-watcher"), func(o any) {
			o.(*corev1.Service).Spec.Ports[0].TargetPort = intstr.FromString("load-watcher-http-api")
		}, field.ErrorList{field.Invalid(field.NewPath("spec", "ports").Index(0).Child("targetPort"), nil, "")}},
		{"ConfigMap label key with a space", find("ConfigMap", "ballast-scheduler"), func(o any) {
			o.(*corev1.ConfigMap).Labels["my label"] = "x"
		}, field.ErrorList{field.Invalid(field.NewPath("metadata", "labels"), nil, "")}},
		{"ConfigMap over 1 MiB", find("ConfigMap", "ballast-scheduler"), func(o any) {
			o.(*corev1.ConfigMap).Data["big"] = strings.Repeat("x", corev1.MaxSecretSize)
		}, field.ErrorList{field.TooLong(field.NewPath(""), nil, corev1.MaxSecretSize)}},
		{"NetworkPolicy peer that is not a CIDR", find("NetworkPolicy", "ballast-load-watcher"), func(o any) {
			np := o.(*networkingv1.NetworkPolicy)
			np.Spec.Ingress[0].From = append(np.Spec.Ingress[0].From, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0"}})
		}, field.ErrorList{field.Invalid(field.NewPath("spec", "ingress").Index(0).Child("from").Index(2).Child("ipBlock", "cidr"), nil, "")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.obj
			o.typed = deepCopy(o.typed)
			o.meta = metaOf(o.typed)
			tc.change(o.typed)
			got := validateObject(o)
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail", "Origin", "CoveredByDeclarative")); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
		})
	}
}

func deepCopy(typed any) any {
	switch o := typed.(type) {
	case *corev1.Service:
		return o.DeepCopy()
	case *corev1.ConfigMap:
		return o.DeepCopy()
	case *networkingv1.NetworkPolicy:
		return o.DeepCopy()
	}
	return typed
}

// TestUnknownFieldsAreRefused: a field the object's type does not have
// (a misspelt affinity, say) would be dropped by the API server, and what
// the values asked for would silently not happen.
func TestUnknownFieldsAreRefused(t *testing.T) {
	manifest := `apiVersion: apps/v1
kind: Deployment
metadata: {name: x, namespace: y}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      nodeAfinity: {}
      containers: [{name: c, image: busybox}]
`
	refusals, err := Manifest(context.Background(), manifest, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(refusals) != 1 || refusals[0].Component != apiServer || refusals[0].Workload != "Deployment/x" ||
		!strings.Contains(refusals[0].Err.Error(), `unknown field "nodeAfinity"`) {
		t.Errorf("want the API server's refusal of nodeAfinity, got %v", refusals)
	}
}
