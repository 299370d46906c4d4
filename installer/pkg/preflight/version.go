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
// kubeVersion constraint, which bounds it both ways. Ballast's scheduler is
// kube-scheduler of one Kubernetes minor: it must never be newer than the API
// server it talks to (an older server lacks APIs and fields it relies on),
// and Kubernetes's version skew policy lets it be at most one minor older
// (a newer server may stop serving what it reads, and is not tested).
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
	at := func(minor int) *semver.Version { return semver.MustParse(fmt.Sprintf("%d.%d.0-0", major, minor)) }
	if c.Check(at(minor)) {
		return nil
	}
	for older := minor - 1; older >= 0 && older >= minor-10; older-- {
		if c.Check(at(older)) {
			return fmt.Errorf("the API server runs Kubernetes %d.%d (%s) but this Ballast supports %s: its scheduler is a "+
				"kube-scheduler of Kubernetes %d.%d at the newest, and Kubernetes's version skew policy lets a kube-scheduler be at "+
				"most one minor older than its API server. Install a Ballast release built for this Kubernetes (docs/upgrade.md), "+
				"or pass --allow-version-skew if you accept the risk", major, minor, info.GitVersion, constraint, major, older-1)
		}
	}
	return fmt.Errorf("the API server runs Kubernetes %d.%d (%s) but Ballast needs %s: its scheduler is built on a newer "+
		"Kubernetes, and a kube-scheduler must never be newer than its API server. Upgrade the cluster (docs/install.md lists "+
		"supported versions), or pass --allow-version-skew if you accept the risk", major, minor, info.GitVersion, constraint)
}
