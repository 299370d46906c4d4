package k3s

import (
	"os"

	"github.com/spf13/pflag"
)

// HostFlags locate k3s's files on the host a command runs on.
type HostFlags struct {
	// Root is prepended to every host path.
	Root string
	// DataDir is k3s's --data-dir.
	DataDir string
	// NodeName is this server's node name; found from k3s's files when empty.
	NodeName string
}

// AddFlags registers --root, --k3s-data-dir and --node-name.
func (f *HostFlags) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&f.Root, "root", "/", "root of the host filesystem holding k3s's files")
	fs.StringVar(&f.DataDir, "k3s-data-dir", DefaultDataDir, "k3s's --data-dir")
	fs.StringVar(&f.NodeName, "node-name", "", "this k3s server's node name (default: from k3s's kubelet certificate, else the hostname)")
}

// Paths returns the paths of k3s's files on this host.
func (f HostFlags) Paths() Paths {
	p := HostPaths(f.Root)
	if f.DataDir != "" {
		p.DataDir = f.DataDir
	}
	return p
}

// Node returns this host's node name: --node-name, else LocalNodeName.
func (f HostFlags) Node() (string, error) {
	if f.NodeName != "" {
		return f.NodeName, nil
	}
	return LocalNodeName(f.Paths())
}

// DropInWritten reports whether the scheduler drop-in is on this host.
func (p Paths) DropInWritten() bool {
	_, err := os.Stat(p.DropIn())
	return err == nil
}
