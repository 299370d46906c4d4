//go:build !unix

package k3s

import "errors"

// ErrLocked means another ballast install or uninstall holds the lock.
var ErrLocked = errors.New("another ballast install or uninstall is running on this host")

// lock is unsupported off Unix: k3s servers run on Linux only.
func lock(string) (func(), error) {
	return nil, errors.New("installing into k3s needs a Linux k3s server; use --helm from this machine")
}
