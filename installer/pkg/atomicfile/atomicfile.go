// Package atomicfile writes files so that readers see the old content or the
// new, never a mix, with the mode set before any byte is written.
package atomicfile

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write makes path hold data with mode perm. It writes a temporary file
// beside path, with perm from the start (a secret is never readable by
// others, not even for a moment), syncs it and renames it over path, so a
// reader (k3s's manifest watcher, a component loading its kubeconfig) never
// sees half a file. It returns false, writing nothing, when path already
// matches.
func Write(path string, data []byte, perm os.FileMode) (bool, error) {
	if Matches(path, data, perm) {
		return false, nil
	}
	return replace(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Matches reports whether path holds data with mode perm: what Write
// would leave unchanged.
func Matches(path string, data []byte, perm os.FileMode) bool {
	old, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(old, data) {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().Perm() == perm
}

// MatchesFile reports whether path holds the content of the file src with
// mode perm: what CopyFile would leave unchanged.
func MatchesFile(path, src string, perm os.FileMode) (bool, error) {
	srcSum, err := fileSum(src)
	if err != nil {
		return false, err
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != perm {
		return false, nil
	}
	sum, err := fileSum(path)
	return err == nil && sum == srcSum, nil
}

// Sum is the SHA-256 of the file at path, in hex.
func Sum(path string) (string, error) {
	sum, err := fileSum(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sum), nil
}

// CopyFile makes path hold the content of the file src, as Write does,
// without reading it into memory: for large files such as image archives.
// It returns false, writing nothing, when path already matches.
func CopyFile(path, src string, perm os.FileMode) (bool, error) {
	srcSum, err := fileSum(src)
	if err != nil {
		return false, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() == perm {
		if sum, err := fileSum(path); err == nil && sum == srcSum {
			return false, nil
		}
	}
	return replace(path, perm, func(w io.Writer) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
}

func fileSum(path string) ([sha256.Size]byte, error) {
	var sum [sha256.Size]byte
	f, err := os.Open(path)
	if err != nil {
		return sum, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return sum, fmt.Errorf("read %s: %w", path, err)
	}
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// replace writes a temporary file beside path with write, with perm from
// the start, syncs it and renames it over path.
func replace(path string, perm os.FileMode, write func(io.Writer) error) (bool, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("create %s: %w", dir, err)
	}
	// A dot-prefixed .tmp name is never picked up by k3s, which applies *.yaml files.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return false, fmt.Errorf("create temporary file in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return false, fmt.Errorf("chmod %s: %w", tmp.Name(), err)
	}
	if err := write(tmp); err != nil {
		tmp.Close()
		return false, fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return false, fmt.Errorf("sync %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return false, fmt.Errorf("replace %s: %w", path, err)
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // make the rename durable; best effort on filesystems without directory sync
		d.Close()
	}
	return true, nil
}
