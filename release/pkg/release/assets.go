// Package release builds every artifact a Ballast release publishes into
// one directory (`make release`) and checks that they belong together: the
// ballast and ballast-sim binaries of every platform, the chart archive, the
// images' air-gap archives and OCI layouts, an SPDX SBOM of every binary and
// of every platform's image, and SHA256SUMS over the assets. The release
// workflow signs and uploads that directory and pushes its layouts; it
// builds nothing itself.
package release

import (
	"fmt"
	"strings"
)

// A Program is a binary a release ships for every Platform.
type Program struct {
	// Name of the binary and of its assets, <name>-<platform slug>.
	Name string
	// Module is the directory of its module, relative to the repository
	// root; it is built there alone (GOWORK=off), as someone who requires
	// the module builds it.
	Module string
	// Pkg is its main package, relative to the module.
	Pkg string
}

// Programs are the CLI and the simulator `ballast sim` runs.
var Programs = []Program{
	{Name: "ballast", Module: "installer", Pkg: "./cmd/ballast"},
	{Name: "ballast-sim", Module: "simulator", Pkg: "./cmd/ballast-sim"},
}

// A Platform is one a release builds binaries or images for.
type Platform struct {
	OS, Arch, ARM string
}

func (p Platform) String() string {
	s := p.OS + "/" + p.Arch
	if p.ARM != "" {
		s += "/v" + p.ARM
	}
	return s
}

// Slug names the platform in asset names, as k3s names its own: linux/arm/v7
// is linux-arm.
func (p Platform) Slug() string { return p.OS + "-" + p.Arch }

// ParsePlatform reads os/arch[/v7].
func ParsePlatform(s string) (Platform, error) {
	parts := strings.Split(s, "/")
	switch {
	case len(parts) == 2:
		return Platform{OS: parts[0], Arch: parts[1]}, nil
	case len(parts) == 3 && parts[1] == "arm" && strings.HasPrefix(parts[2], "v"):
		return Platform{OS: parts[0], Arch: "arm", ARM: strings.TrimPrefix(parts[2], "v")}, nil
	}
	return Platform{}, fmt.Errorf("platform %q: want os/arch or linux/arm/v7", s)
}

// BinaryPlatforms are the platforms of the binaries: PCs, 64-bit and
// 32-bit Raspberry Pis, Macs.
var BinaryPlatforms = []Platform{
	{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}, {OS: "linux", Arch: "arm", ARM: "7"},
	{OS: "darwin", Arch: "amd64"}, {OS: "darwin", Arch: "arm64"},
}

// ImagePlatforms are the platforms of the images: the nodes k3s runs on.
var ImagePlatforms = []Platform{{OS: "linux", Arch: "amd64"}, {OS: "linux", Arch: "arm64"}, {OS: "linux", Arch: "arm", ARM: "7"}}

// Images are the images below the registry, in the chart's order.
var Images = []string{"load-watcher", "ballast-scheduler", "ballast-descheduler"}

// Asset names in the release directory.
const (
	SumsFile = "SHA256SUMS"
	// LayoutDir holds one OCI layout per image, which the workflow pushes.
	LayoutDir = "oci"
)

// BinaryAsset names a program's binary for a platform.
func BinaryAsset(program string, p Platform) string { return program + "-" + p.Slug() }

// ChartAsset names the chart archive of a version, as helm package does.
func ChartAsset(version string) string { return "ballast-" + version + ".tgz" }

// ArchiveAsset names the air-gap archive of a platform.
func ArchiveAsset(p Platform) string { return "ballast-images-" + p.Slug() + ".tar" }

// SBOMAsset names the SBOM of a file asset.
func SBOMAsset(asset string) string { return asset + ".spdx.json" }

// ImageSBOMAsset names the SBOM of one platform's image.
func ImageSBOMAsset(image, version string, p Platform) string {
	return image + "-" + version + "-" + p.Slug() + ".spdx.json"
}

// Assets lists every file a release of version holds besides SumsFile.
func Assets(version string) []string {
	var out []string
	for _, prog := range Programs {
		for _, p := range BinaryPlatforms {
			out = append(out, BinaryAsset(prog.Name, p), SBOMAsset(BinaryAsset(prog.Name, p)))
		}
	}
	out = append(out, ChartAsset(version))
	for _, p := range ImagePlatforms {
		out = append(out, ArchiveAsset(p))
		for _, img := range Images {
			out = append(out, ImageSBOMAsset(img, version, p))
		}
	}
	return out
}
