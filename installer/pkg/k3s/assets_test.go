package k3s

import (
	"bytes"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestK3sAssetsMatchWhatTheInstallerWrites keeps the hand-copy files in k3s/
// equal to the installer's, and marked so ballast uninstall removes them.
func TestK3sAssetsMatchWhatTheInstallerWrites(t *testing.T) {
	p := HostPaths("/")
	for asset, want := range map[string][]byte{
		"../../../k3s/config.yaml.d/90-ballast-scheduler.yaml": dropIn(p),
		"../../../k3s/bootstrap-scheduler.yaml":                bootstrapSchedulerConfig(p, DefaultBootstrapSchedulerName),
	} {
		got, err := os.ReadFile(asset)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(got, []byte(managedMarker)) {
			t.Errorf("%s lacks the managed marker; ballast uninstall would refuse to remove it", asset)
		}
		var gotObj, wantObj any
		if err := yaml.Unmarshal(got, &gotObj); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(want, &wantObj); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantObj, gotObj); diff != "" {
			t.Errorf("%s differs from what the installer writes (-installer,+asset):\n%s", asset, diff)
		}
	}
	for _, asset := range []string{"../../../k3s/helmchart.yaml"} {
		data, err := os.ReadFile(asset)
		if err != nil {
			t.Fatal(err)
		}
		hc, err := DecodeHelmChart(data)
		if err != nil {
			t.Fatalf("%s: %v", asset, err)
		}
		if hc.Name != HelmChartName || hc.Namespace != HelmChartNamespace {
			t.Errorf("%s names %s/%s; uninstall deletes %s/%s", asset, hc.Namespace, hc.Name, HelmChartNamespace, HelmChartName)
		}
	}
}
