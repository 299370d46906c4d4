package k3s

import (
	"bytes"
	"fmt"
	"os"
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
