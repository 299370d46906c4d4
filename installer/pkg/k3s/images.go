package k3s

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/ballast-sched/ballast/installer/pkg/atomicfile"
)

// placeImages copies the images archive into k3s's images directory, where
// k3s imports it (at start, and while it runs since its January 2025
// releases), and records it for uninstall. It returns where it went and
// whether it changed.
func placeImages(p Paths, archive string) (string, bool, error) {
	dst := filepath.Join(p.ImagesDir(), filepath.Base(archive))
	changed, err := atomicfile.CopyFile(dst, archive, 0o644)
	if err != nil {
		return dst, false, fmt.Errorf("place the images archive where k3s imports it: %w", err)
	}
	placed, err := placedImages(p)
	if err != nil {
		return dst, changed, err
	}
	if !slices.Contains(placed, dst) {
		placed = append(placed, dst)
		if _, err := atomicfile.Write(p.PlacedImages(), []byte(strings.Join(placed, "\n")+"\n"), 0o600); err != nil {
			return dst, changed, err
		}
	}
	return dst, changed, nil
}

// placedImages reads the record of the archives installs placed.
func placedImages(p Paths) ([]string, error) {
	data, err := os.ReadFile(p.PlacedImages())
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p.PlacedImages(), err)
	}
	return strings.Fields(string(data)), nil
}

// removePlacedImages removes the archives installs placed, and the record.
// Only files in the images directory are removed, whatever the record says.
// The images k3s imported from them stay in containerd, as pulled images do.
func removePlacedImages(p Paths) ([]string, error) {
	placed, err := placedImages(p)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, f := range placed {
		if filepath.Dir(f) != p.ImagesDir() {
			continue
		}
		ok, err := removeFile(f)
		if err != nil {
			return removed, err
		}
		if ok {
			removed = append(removed, f)
		}
	}
	_, err = removeFile(p.PlacedImages())
	return removed, err
}
