package preflight

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/version"
)

func TestKubeVersion(t *testing.T) {
	const constraint = ">=1.36.0-0 <1.38.0-0"
	for _, tc := range []struct {
		name    string
		info    version.Info
		wantErr string // what the refusal says, empty when it accepts
	}{
		{name: "same minor", info: version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.3"}},
		{name: "k3s patch release", info: version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.1+k3s1"}},
		{name: "one minor newer", info: version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.0"}},
		{name: "pre-release of the next minor", info: version.Info{Major: "1", Minor: "37", GitVersion: "v1.37.0-alpha.1"}},
		{name: "two minors newer", info: version.Info{Major: "1", Minor: "38", GitVersion: "v1.38.1+k3s1"}, wantErr: "at most one minor older"},
		{name: "far newer", info: version.Info{Major: "1", Minor: "41", GitVersion: "v1.41.0"}, wantErr: "at most one minor older"},
		{name: "managed cluster minor with plus", info: version.Info{Major: "1", Minor: "36+", GitVersion: "v1.36.2-eks-1234"}},
		{name: "pre-release of the minor", info: version.Info{Major: "1", Minor: "36", GitVersion: "v1.36.0-rc.1"}},
		{name: "older minor", info: version.Info{Major: "1", Minor: "35", GitVersion: "v1.35.4+k3s1"}, wantErr: "never be newer"},
		{name: "older minor from gitVersion only", info: version.Info{GitVersion: "v1.34.2"}, wantErr: "never be newer"},
		// An API server emulating 1.35 serves 1.35's APIs whatever its binary is.
		{name: "emulating an older minor", info: version.Info{Major: "1", Minor: "36", EmulationMajor: "1", EmulationMinor: "35", GitVersion: "v1.36.3"}, wantErr: "never be newer"},
		{name: "unstamped binary with numeric fields", info: version.Info{Major: "1", Minor: "36", GitVersion: "v0.0.0-master+$Format:%H$"}},
		{name: "no version at all", info: version.Info{GitVersion: "v0.0.0-master+$Format:%H$"}, wantErr: "no usable version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := KubeVersion(&tc.info, constraint)
			if (err != nil) != (tc.wantErr != "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("KubeVersion(%+v) = %v, want an error saying %q", tc.info, err, tc.wantErr)
			}
		})
	}
}
