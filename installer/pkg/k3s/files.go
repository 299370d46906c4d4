package k3s

import (
	"bytes"
	"fmt"
	"os"

	"github.com/ballast-sched/ballast/installer/pkg/atomicfile"
)

// ensureStartsWith refuses to touch path when it exists and does not start
// with prefix, the mark of a file Ballast wrote; problem completes the error.
func ensureStartsWith(path, prefix, problem string) error {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return fmt.Errorf("%s exists and %s", path, problem)
	}
	return nil
}

// removeFile deletes path and reports whether it existed.
func removeFile(path string) (bool, error) {
	err := os.Remove(path)
	switch {
	case err == nil:
		return true, nil
	case os.IsNotExist(err):
		return false, nil
	default:
		return false, fmt.Errorf("remove %s: %w", path, err)
	}
}

// exists reports whether there is a file at path.
func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// fileOps changes host files, or with dryRun only says which it would
// change; done lists what changed (or would), in order.
type fileOps struct {
	dryRun bool
	done   []string
}

func (f *fileOps) note(format string, args ...any) {
	verb := ""
	if f.dryRun {
		verb = "would "
	}
	f.done = append(f.done, verb+fmt.Sprintf(format, args...))
}

// write makes path hold data with mode perm (atomicfile.Write) and reports
// whether it changed.
func (f *fileOps) write(path string, data []byte, perm os.FileMode) (bool, error) {
	if atomicfile.Matches(path, data, perm) {
		return false, nil
	}
	if !f.dryRun {
		if _, err := atomicfile.Write(path, data, perm); err != nil {
			return false, err
		}
	}
	f.note("write %s", path)
	return true, nil
}

// copy makes path hold the content of src (atomicfile.CopyFile) and reports
// whether it changed.
func (f *fileOps) copy(path, src string, perm os.FileMode) (bool, error) {
	same, err := atomicfile.MatchesFile(path, src, perm)
	if err != nil || same {
		return false, err
	}
	if !f.dryRun {
		if _, err := atomicfile.CopyFile(path, src, perm); err != nil {
			return false, err
		}
	}
	f.note("copy %s to %s", src, path)
	return true, nil
}

// remove deletes path and reports whether it existed.
func (f *fileOps) remove(path string) (bool, error) {
	if f.dryRun {
		if !exists(path) {
			return false, nil
		}
		f.note("remove %s", path)
		return true, nil
	}
	removed, err := removeFile(path)
	if removed {
		f.note("remove %s", path)
	}
	return removed, err
}
