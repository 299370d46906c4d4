package k3sserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Where a k3s server keeps its files, with the defaults of its flags.
const (
	DataDir   = "/var/lib/rancher/k3s"
	ConfigDir = "/etc/rancher/k3s"
	// ConfigFile is k3s's --config; its drop-ins are in ConfigFile+".d".
	ConfigFile = ConfigDir + "/config.yaml"
	// KubeconfigFile is where k3s writes the admin kubeconfig for local tools.
	KubeconfigFile = ConfigDir + "/k3s.yaml"
	// UnitFile is the systemd unit k3s's install script writes for a server.
	UnitFile = "/etc/systemd/system/k3s.service"
)

// HostView lays out the k3s server's host files where k3s keeps them, in a
// mount namespace of the caller's own, so that the host stays untouched and
// a host that runs a real k3s is not confused with the lane's: Dir's
// etc/rancher/k3s appears at /etc/rancher/k3s and var/lib/rancher/k3s at
// /var/lib/rancher/k3s, and k3s's systemd unit at UnitFile. Everything else
// is the host's own.
type HostView struct {
	// Dir holds the files; a process outside the view finds them there.
	Dir string
}

// Path is where a file of the view (such as DataDir+"/server/manifests") is
// on the host.
func (v HostView) Path(inView string) string { return filepath.Join(v.Dir, inView) }

// Prepare creates the directories the view shows.
func (v HostView) Prepare() error {
	for _, d := range []string{ConfigDir, DataDir, "scratch"} {
		if err := os.MkdirAll(v.Path(d), 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", v.Path(d), err)
		}
	}
	return nil
}

// Enter builds the view in this process's mount namespace, which must be
// its own: a process the lane starts with CLONE_NEWNS. It refuses to run in
// its parent's namespace, where its mounts would change the host's. Every
// thread of this process and every child it starts sees the view.
func (v HostView) Enter() error {
	if err := ownMountNamespace(); err != nil {
		return err
	}
	for _, d := range []string{"/etc", "/var/lib"} {
		if v.Dir == d || strings.HasPrefix(filepath.Clean(v.Dir), d+"/") {
			return fmt.Errorf("the view's files %s cannot be below %s, which the view overlays", v.Dir, d)
		}
	}
	// Nothing mounted here goes back to the host's namespace.
	if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making the mount namespace private: %w", err)
	}
	// The overlays' writable layers live on a tmpfs of this namespace:
	// they only hold the directories the bind mounts need.
	scratch := v.Path("scratch")
	if err := syscall.Mount("tmpfs", scratch, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "mode=755"); err != nil {
		return fmt.Errorf("mounting a tmpfs on %s: %w", scratch, err)
	}
	for i, dir := range []string{"/etc", "/var/lib"} {
		upper, work := filepath.Join(scratch, strconv.Itoa(i), "upper"), filepath.Join(scratch, strconv.Itoa(i), "work")
		for _, d := range []string{upper, work} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", d, err)
			}
		}
		opts := "lowerdir=" + dir + ",upperdir=" + upper + ",workdir=" + work
		if err := syscall.Mount("overlay", dir, "overlay", 0, opts); err != nil {
			return fmt.Errorf("mounting an overlay on %s: %w", dir, err)
		}
	}
	for _, d := range []string{ConfigDir, DataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating %s in the view: %w", d, err)
		}
		if err := syscall.Mount(v.Path(d), d, "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("binding %s on %s: %w", v.Path(d), d, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(UnitFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(UnitFile, []byte(unit), 0o644); err != nil {
		return fmt.Errorf("writing %s in the view: %w", UnitFile, err)
	}
	return nil
}

// unit is what k3s's install script writes for a server, cut to what
// identifies one.
const unit = `# The k3s server of Ballast's end-to-end lane (ballast-k3s), in the lane's own view of this host.
[Unit]
Description=Lightweight Kubernetes
[Service]
Type=notify
ExecStart=/usr/local/bin/k3s server
`

// ownMountNamespace fails when this process shares its parent's mount
// namespace.
func ownMountNamespace() error {
	self, err := os.Readlink("/proc/self/ns/mnt")
	if err != nil {
		return fmt.Errorf("reading this process's mount namespace: %w", err)
	}
	parent, err := os.Readlink("/proc/" + strconv.Itoa(os.Getppid()) + "/ns/mnt")
	if err != nil {
		return fmt.Errorf("reading the parent's mount namespace: %w", err)
	}
	if self == parent {
		return errors.New("not in a mount namespace of its own (start it with CLONE_NEWNS): its mounts would change the host's")
	}
	return nil
}
