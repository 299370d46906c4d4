package k3s

import (
	"encoding/base64"
	"fmt"
	"maps"
	"slices"

	helmv1 "github.com/k3s-io/helm-controller/pkg/apis/helm.cattle.io/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"sigs.k8s.io/yaml"
)

// manifestHeader tells a reader of the manifests directory where the file comes from.
const manifestHeader = `# Ballast, written by "ballast install". Remove it with "ballast uninstall":
# deleting this file alone leaves Ballast running.
`

// ensureOwnManifest refuses to remove a file at path that "ballast install"
// did not write.
func ensureOwnManifest(path string) error {
	return ensureStartsWith(path, manifestHeader, "was not written by ballast install; move it away")
}

// NewHelmChart builds the HelmChart that makes helm-controller install the
// chart archive with the given values into targetNamespace.
func NewHelmChart(chartArchive []byte, values map[string]any, targetNamespace string) (*helmv1.HelmChart, error) {
	valuesContent := ""
	if len(values) > 0 {
		out, err := yaml.Marshal(values)
		if err != nil {
			return nil, fmt.Errorf("encode values: %w", err)
		}
		valuesContent = string(out)
	}
	return &helmv1.HelmChart{
		TypeMeta: metav1.TypeMeta{APIVersion: helmv1.SchemeGroupVersion.String(), Kind: "HelmChart"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      HelmChartName,
			Namespace: HelmChartNamespace,
			Labels:    maps.Clone(helmChartLabels),
		},
		Spec: helmv1.HelmChartSpec{
			ChartContent:    base64.StdEncoding.EncodeToString(chartArchive),
			TargetNamespace: targetNamespace,
			CreateNamespace: true,
			ValuesContent:   valuesContent,
		},
	}, nil
}

// EncodeHelmChart renders hc as the YAML file k3s applies, without status or
// server-set fields, so the same input always gives the same bytes.
func EncodeHelmChart(hc *helmv1.HelmChart) ([]byte, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(hc)
	if err != nil {
		return nil, fmt.Errorf("convert HelmChart: %w", err)
	}
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	out, err := yaml.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode HelmChart: %w", err)
	}
	return append([]byte(manifestHeader), out...), nil
}

// DecodeHelmChart parses a HelmChart manifest with helm-controller's types.
func DecodeHelmChart(data []byte) (*helmv1.HelmChart, error) {
	scheme := runtime.NewScheme()
	if err := helmv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	obj, _, err := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer().Decode(data, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("decode HelmChart: %w", err)
	}
	hc, ok := obj.(*helmv1.HelmChart)
	if !ok {
		return nil, fmt.Errorf("manifest holds a %T, not a HelmChart", obj)
	}
	return hc, nil
}

// ChartArchive returns the chart archive a HelmChart carries.
func ChartArchive(hc *helmv1.HelmChart) ([]byte, error) {
	data, err := base64.StdEncoding.DecodeString(hc.Spec.ChartContent)
	if err != nil {
		return nil, fmt.Errorf("decode spec.chartContent: %w", err)
	}
	return data, nil
}

// helmChartLabels mark the HelmChart ballast install writes.
var helmChartLabels = map[string]string{"app.kubernetes.io/part-of": "ballast", "app.kubernetes.io/managed-by": "ballast-cli"}

// OwnedHelmChart reports whether hc is the HelmChart ballast install wrote
// (it carries its labels); whyNot says what it is instead.
func OwnedHelmChart(hc *helmv1.HelmChart) (owned bool, whyNot string) {
	for _, k := range slices.Sorted(maps.Keys(helmChartLabels)) {
		if v := helmChartLabels[k]; hc.Labels[k] != v {
			return false, fmt.Sprintf("it was not written by ballast install (it does not carry the label %s=%s)", k, v)
		}
	}
	return true, ""
}
