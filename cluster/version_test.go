package cluster

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestVersionIsGoMods holds Version to the k8s.io/kubernetes the module
// builds the control plane from (this module's go.mod).
func TestVersionIsGoMods(t *testing.T) {
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*k8s\.io/kubernetes (v\S+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod requires no k8s.io/kubernetes")
	}
	if got := string(m[1]); got != Version {
		t.Errorf("go.mod builds the control plane from k8s.io/kubernetes %s, but cluster.Version is %s", got, Version)
	}
}

func TestWithVersion(t *testing.T) {
	info, err := versionedDiscovery{}.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if info.GitVersion != Version || !strings.HasPrefix(Version, "v"+info.Major+"."+info.Minor+".") {
		t.Errorf("ServerVersion = %+v, want %s with its major and minor", info, Version)
	}
}
