package k3s

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ballast-sched/ballast/installer/pkg/atomicfile"
)

// placedImage is an archive an install placed, with its SHA-256 then.
type placedImage struct {
	Path string
	// Sum is empty in the record of an older ballast, which kept none.
	Sum string
}

// placeImages copies the images archive into k3s's images directory, where
// k3s imports it (at start, and while it runs since its January 2025
// releases), and records it, with its checksum, for uninstall. It returns
// where it went and whether it changed.
func placeImages(ops *fileOps, p Paths, archive string) (string, bool, error) {
	dst := filepath.Join(p.ImagesDir(), filepath.Base(archive))
	changed, err := ops.copy(dst, archive, 0o644)
	if err != nil {
		return dst, false, fmt.Errorf("place the images archive where k3s imports it: %w", err)
	}
	if ops.dryRun {
		return dst, changed, nil
	}
	sum, err := atomicfile.Sum(dst)
	if err != nil {
		return dst, changed, err
	}
	placed, err := placedImages(p)
	if err != nil {
		return dst, changed, err
	}
	record := []placedImage{{Path: dst, Sum: sum}}
	for _, pi := range placed {
		if pi.Path != dst {
			record = append(record, pi)
		}
	}
	var b strings.Builder
	for _, pi := range record {
		if pi.Sum != "" {
			fmt.Fprintf(&b, "%s  %s\n", pi.Sum, pi.Path)
		} else {
			fmt.Fprintf(&b, "%s\n", pi.Path)
		}
	}
	if _, err := atomicfile.Write(p.PlacedImages(), []byte(b.String()), 0o600); err != nil {
		return dst, changed, err
	}
	return dst, changed, nil
}

// placedImages reads the record of the archives installs placed: a line
// "SHA256  PATH" each, or "PATH" in an older ballast's record.
func placedImages(p Paths) ([]placedImage, error) {
	data, err := os.ReadFile(p.PlacedImages())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.PlacedImages(), err)
	}
	var out []placedImage
	for _, line := range strings.Split(string(data), "\n") {
		switch f := strings.Fields(line); len(f) {
		case 1:
			out = append(out, placedImage{Path: f[0]})
		case 2:
			out = append(out, placedImage{Path: f[1], Sum: f[0]})
		}
	}
	return out, nil
}

// archivePrefix starts the name of every images archive Ballast builds.
const archivePrefix = "ballast-images-"

// planPlacedImages says, of each archive installs placed, whether uninstall
// removes it: only a file in k3s's images directory that still holds what
// was placed (an older record, without checksums: that still has the name
// of Ballast's archives). The images k3s imported from them stay in
// containerd, as pulled images do.
func planPlacedImages(p Paths) ([]FileAction, error) {
	placed, err := placedImages(p)
	if err != nil {
		return nil, err
	}
	var out []FileAction
	for _, pi := range placed {
		a := FileAction{Path: pi.Path, What: "images archive"}
		switch {
		case !exists(pi.Path):
			continue
		case filepath.Dir(pi.Path) != p.ImagesDir():
			a.Why = "it is outside k3s's images directory " + p.ImagesDir()
		case pi.Sum == "" && !strings.HasPrefix(filepath.Base(pi.Path), archivePrefix):
			a.Why = "an older ballast recorded it without a checksum, and its name is not one of Ballast's archives"
		case pi.Sum != "":
			sum, err := atomicfile.Sum(pi.Path)
			if err != nil {
				return nil, err
			}
			if sum != pi.Sum {
				a.Why = "its content changed since ballast install placed it"
			}
		}
		a.Remove = a.Why == ""
		out = append(out, a)
	}
	return out, nil
}
