package k3sserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/klog/v2"
)

// ImagesDir is where a k3s node takes image archives from.
const ImagesDir = DataDir + "/agent/images"

// ImportInterval is how often the lane's agent looks at ImagesDir again.
const ImportInterval = 2 * time.Second

// archiveSuffixes are the archives k3s imports (k3s's agent/containerd).
var archiveSuffixes = []string{".tar", ".tar.gz", ".tgz", ".tar.zst", ".tzst", ".tar.bz2", ".tbz", ".tar.lz4"}

// Importer imports the image archives of a k3s node's images directory into
// its containerd, as the k3s agent does: every archive when it starts, then
// each archive that appears or changes while it runs (k3s since its January
// 2025 releases; before, only at start).
type Importer struct {
	Dir string
	// Import imports one archive into the node's containerd (namespace k8s.io).
	Import func(ctx context.Context, path string) error

	// imported is each archive's size and modification time when it was
	// last imported.
	imported map[string]fileState
	// pending is an archive seen changing, imported once it holds still.
	pending map[string]fileState
}

type fileState struct {
	size    int64
	modTime time.Time
}

// Sync imports the archives that are new or changed since the last call and
// have not changed since the one before (a file still being copied is left
// for the next call); with all, every archive at once.
func (im *Importer) Sync(ctx context.Context, all bool) error {
	if im.imported == nil {
		im.imported, im.pending = map[string]fileState{}, map[string]fileState{}
	}
	entries, err := os.ReadDir(im.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", im.Dir, err)
	}
	var errs []error
	for _, e := range entries {
		if e.IsDir() || strings.HasPrefix(e.Name(), ".") || !slices.ContainsFunc(archiveSuffixes, func(s string) bool { return strings.HasSuffix(e.Name(), s) }) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		path := filepath.Join(im.Dir, e.Name())
		now := fileState{size: info.Size(), modTime: info.ModTime()}
		if !all {
			if im.imported[path] == now {
				continue
			}
			if im.pending[path] != now {
				im.pending[path] = now
				continue
			}
		}
		delete(im.pending, path)
		start := time.Now()
		if err := im.Import(ctx, path); err != nil {
			errs = append(errs, fmt.Errorf("importing %s: %w", path, err))
			continue
		}
		im.imported[path] = now
		klog.FromContext(ctx).Info("Imported images", "archive", path, "took", time.Since(start).Round(time.Millisecond))
	}
	return errors.Join(errs...)
}

// Run imports new and changed archives every ImportInterval until ctx ends;
// Sync(ctx, true) imports every archive at start, before it.
func (im *Importer) Run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(ImportInterval):
		}
		if err := im.Sync(ctx, false); err != nil {
			klog.FromContext(ctx).Error(err, "Importing images")
		}
	}
}
