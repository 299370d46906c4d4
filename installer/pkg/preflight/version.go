package preflight

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/Masterminds/semver/v3"
	"k8s.io/apimachinery/pkg/version"
)

// leadingDigits reads "36" from minors such as "36", "36+" (some managed
// clusters) or a GitVersion's "v1.36.2+k3s1".
var leadingDigits = regexp.MustCompile(`^\d+`)

// gitVersion reads major and minor from a GitVersion such as v1.36.2+k3s1.
var gitVersion = regexp.MustCompile(`^v?(\d+)\.(\d+)`)

// ServerMinor returns the Kubernetes major.minor an API server serves. An API
// server that emulates an older version (--emulated-version) serves that
// version's APIs, so the emulated version counts.
func ServerMinor(info *version.Info) (major, minor int, err error) {
	pick := [][2]string{{info.EmulationMajor, info.EmulationMinor}, {info.Major, info.Minor}}
	if m := gitVersion.FindStringSubmatch(info.GitVersion); m != nil {
		pick = append(pick, [2]string{m[1], m[2]})
	}
	for _, p := range pick {
		maj, errMaj := strconv.Atoi(leadingDigits.FindString(p[0]))
		min, errMin := strconv.Atoi(leadingDigits.FindString(p[1]))
		if errMaj == nil && errMin == nil && maj > 0 {
			return maj, min, nil
		}
	}
	return 0, 0, fmt.Errorf("API server reports no usable version (major %q, minor %q, gitVersion %q)", info.Major, info.Minor, info.GitVersion)
}

// KubeVersion checks the API server's version against the chart's
// kubeVersion constraint. kube-scheduler may be older than the API server it
// talks to, never newer: Ballast's scheduler is built on one Kubernetes minor,
// and an older API server lacks APIs and fields that scheduler relies on.
func KubeVersion(info *version.Info, constraint string) error {
	major, minor, err := ServerMinor(info)
	if err != nil {
		return err
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return fmt.Errorf("chart kubeVersion %q: %w", constraint, err)
	}
	// Patch 0 with a pre-release accepts every patch and pre-release of a minor.
	v := semver.MustParse(fmt.Sprintf("%d.%d.0-0", major, minor))
	if !c.Check(v) {
		return fmt.Errorf("the API server runs Kubernetes %d.%d (%s) but Ballast needs %s: its scheduler is built on a newer "+
			"Kubernetes, and a kube-scheduler must never be newer than its API server. Upgrade the cluster (docs/install.md lists "+
			"supported versions), or pass --allow-version-skew if you accept the risk", major, minor, info.GitVersion, constraint)
	}
	return nil
}
