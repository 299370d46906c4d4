package preflight

import (
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

func TestKubeVersion(t *testing.T) {
	const constraint = ">=1.36.0-0"
	for _, tc := range []struct {
		name    string
		info    version.Info
		wantErr bool
	}{
		{name: "same minor", info: version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.3"}},
		{name: "k3s patch release", info: version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.1+k3s1"}},
		{name: "newer minor", info: version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.0"}},
		{name: "managed cluster minor with plus", info: version.Info{Major: "1", Minor: "36+", GitVersion: "v1.36.2-eks-1234"}},
		{name: "pre-release of the minor", info: version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.0-rc.1"}},
		{name: "older minor", info: version.Info{Major: "1", Minor: "35", GitVersion: "v1.35.4+k3s1"}, wantErr: true},
		{name: "older minor from gitVersion only", info: version.Info{GitVersion: "v1.34.2"}, wantErr: true},
		// An API server emulating 1.35 serves 1.35's APIs whatever its binary is.
		{name: "emulating an older minor", info: version.Info{Major: "1", Minor: "36", EmulationMajor: "1", EmulationMinor: "35", GitVersion: "v1.36.3"}, wantErr: true},
		{name: "unstamped binary with numeric fields", info: version.Info{Major: "1", Minor: "36", GitVersion: "v0.0.0-master+$Format:%H$"}},
		{name: "no version at all", info: version.Info{GitVersion: "v0.0.0-master+$Format:%H$"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := KubeVersion(&tc.info, constraint)
			if (err != nil) != tc.wantErr {
				t.Fatalf("KubeVersion(%+v) = %v, want error %t", tc.info, err, tc.wantErr)
			}
		})
	}
}
