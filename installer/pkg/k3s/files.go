package k3s

import (
	"fmt"
	"os"
)

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
