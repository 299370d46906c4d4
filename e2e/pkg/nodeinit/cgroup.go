package nodeinit

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroupRoot is where every hierarchy is mounted, as on any Linux host.
const cgroupRoot = "/sys/fs/cgroup"

// hierarchy is one cgroup mount below cgroupRoot.
type hierarchy struct {
	// mountPoint such as /sys/fs/cgroup/memory.
	mountPoint string
	// fsType is cgroup (v1) or cgroup2.
	fsType string
	// options name the v1 controllers (or name=…) the hierarchy holds.
	options string
}

// hierarchies lists the cgroup mounts of this mount namespace.
func hierarchies() ([]hierarchy, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading mounts: %w", err)
	}
	defer f.Close()
	var hs []hierarchy
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if len(fields) < 5 || len(tail) < 3 {
			continue
		}
		mp, fsType := fields[4], tail[0]
		// A v1 or hybrid host mounts each hierarchy below cgroupRoot; a
		// unified (v2-only) host mounts its one hierarchy on it.
		if (fsType != "cgroup" && fsType != "cgroup2") || (mp != cgroupRoot && !strings.HasPrefix(mp, cgroupRoot+"/")) {
			continue
		}
		var opts []string
		for _, o := range strings.Split(tail[2], ",") {
			if o != "rw" && o != "ro" {
				opts = append(opts, o)
			}
		}
		hs = append(hs, hierarchy{mountPoint: mp, fsType: fsType, options: strings.Join(opts, ",")})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading mounts: %w", err)
	}
	if len(hs) == 0 {
		return nil, fmt.Errorf("no cgroup hierarchy is mounted below %s", cgroupRoot)
	}
	return hs, nil
}

// JoinCgroup creates cgroup name in every hierarchy and moves this process
// into it.
func JoinCgroup(name string) error { return AddToCgroup(name, os.Getpid()) }

// AddToCgroup creates cgroup name in every hierarchy and moves process pid
// into it. On a cgroup v2 host every cgroup above name passes the node's
// controllers down (cgroup.subtree_control), as a v1 hierarchy does by
// itself.
func AddToCgroup(name string, pid int) error {
	hs, err := hierarchies()
	if err != nil {
		return err
	}
	if unified(hs) {
		parent := cgroupRoot
		parts := strings.Split(strings.Trim(name, "/"), "/")
		for _, part := range parts[:len(parts)-1] {
			parent = filepath.Join(parent, part)
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return fmt.Errorf("creating cgroup %s: %w", parent, err)
			}
			if err := enableControllers(parent); err != nil {
				return err
			}
		}
	}
	for _, h := range hs {
		dir := filepath.Join(h.mountPoint, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating cgroup %s: %w", dir, err)
		}
		if slices.Contains(strings.Split(h.options, ","), "cpuset") {
			if err := inheritCpuset(h.mountPoint, name); err != nil {
				return err
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("moving %d into cgroup %s: %w", pid, dir, err)
		}
	}
	return nil
}

// unified reports whether the host has cgroup v2 alone: one hierarchy, on
// cgroupRoot.
func unified(hs []hierarchy) bool {
	return len(hs) == 1 && hs[0].mountPoint == cgroupRoot && hs[0].fsType == "cgroup2"
}

// nodeControllers are the cgroup v2 controllers a node's kubelet and
// container runtime use.
var nodeControllers = []string{"cpuset", "cpu", "io", "memory", "pids", "hugetlb"}

// enableControllers lets the children of the cgroup v2 directory dir use
// the node's controllers that dir has. A cgroup whose subtree has
// controllers may hold no process itself (cgroup v2's "no internal
// processes" rule), except the root.
func enableControllers(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return fmt.Errorf("reading the controllers of %s: %w", dir, err)
	}
	var enable []string
	for _, c := range strings.Fields(string(raw)) {
		if slices.Contains(nodeControllers, c) {
			enable = append(enable, "+"+c)
		}
	}
	if len(enable) == 0 {
		return nil
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(strings.Join(enable, " ")), 0o644); err != nil {
		return fmt.Errorf("enabling controllers %v below %s: %w", enable, dir, err)
	}
	return nil
}

// evacuate, on a cgroup v2 host and inside the node's cgroup namespace,
// moves this process into the child cgroup /init and passes the controllers
// of the node's cgroup down, so the kubelet can create its own below it
// (kubepods): what kind's and k3s's node entrypoints do on cgroup v2. The
// node's daemons start after it, in /init. On v1 it does nothing.
func evacuate() error {
	hs, err := hierarchies()
	if err != nil || !unified(hs) {
		return err
	}
	init := filepath.Join(cgroupRoot, "init")
	if err := os.MkdirAll(init, 0o755); err != nil {
		return fmt.Errorf("creating cgroup %s: %w", init, err)
	}
	if err := os.WriteFile(filepath.Join(init, "cgroup.procs"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return fmt.Errorf("moving ballast-node into %s: %w", init, err)
	}
	return enableControllers(cgroupRoot)
}

// inheritCpuset fills cpuset.cpus and cpuset.mems of each new level from its
// parent: a v1 cpuset cgroup takes no task until both are set.
func inheritCpuset(mountPoint, name string) error {
	parent := mountPoint
	for _, part := range strings.Split(strings.Trim(name, "/"), "/") {
		dir := filepath.Join(parent, part)
		for _, file := range []string{"cpuset.cpus", "cpuset.mems"} {
			cur, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				return fmt.Errorf("reading %s: %w", filepath.Join(dir, file), err)
			}
			if strings.TrimSpace(string(cur)) != "" {
				continue
			}
			want, err := os.ReadFile(filepath.Join(parent, file))
			if err != nil {
				return fmt.Errorf("reading %s: %w", filepath.Join(parent, file), err)
			}
			if err := os.WriteFile(filepath.Join(dir, file), want, 0o644); err != nil {
				return fmt.Errorf("writing %s: %w", filepath.Join(dir, file), err)
			}
		}
		parent = dir
	}
	return nil
}

// remountCgroups replaces this mount namespace's cgroup mounts by fresh ones
// made inside the current cgroup namespace, so each hierarchy's root is the
// cgroup this process was in when the namespace was created: what a container
// runtime does for a container with its own cgroup namespace.
func remountCgroups() error {
	hs, err := hierarchies()
	if err != nil {
		return err
	}
	if err := syscall.Unmount(cgroupRoot, syscall.MNT_DETACH); err != nil {
		return fmt.Errorf("detaching the host's %s: %w", cgroupRoot, err)
	}
	if len(hs) == 1 && hs[0].mountPoint == cgroupRoot {
		if err := syscall.Mount("cgroup2", cgroupRoot, "cgroup2", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mounting cgroup2 on %s: %w", cgroupRoot, err)
		}
		return nil
	}
	if err := syscall.Mount("tmpfs", cgroupRoot, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "mode=755"); err != nil {
		return fmt.Errorf("mounting a tmpfs on %s: %w", cgroupRoot, err)
	}
	for _, h := range hs {
		if err := os.MkdirAll(h.mountPoint, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", h.mountPoint, err)
		}
		// A v1 hierarchy is found again by its controllers; cgroup2's
		// options (nsdelegate) belong to the host's namespace.
		opts := h.options
		if h.fsType == "cgroup2" {
			opts = ""
		}
		if err := syscall.Mount("cgroup", h.mountPoint, h.fsType, syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, opts); err != nil {
			return fmt.Errorf("mounting %s (%s %s): %w", h.mountPoint, h.fsType, h.options, err)
		}
	}
	return nil
}

// KillCgroup kills every process in cgroup name and its descendants, except
// this one, until none is left or the timeout passes. name is relative to the
// hierarchies' roots as this process sees them ("/" inside the node).
func KillCgroup(name string, timeout time.Duration) error {
	hs, err := hierarchies()
	if err != nil {
		return err
	}
	self := os.Getpid()
	deadline := time.Now().Add(timeout)
	for {
		var pids []int
		for _, h := range hs {
			pids = append(pids, procsBelow(filepath.Join(h.mountPoint, name))...)
		}
		slices.Sort(pids)
		pids = slices.Compact(pids)
		pids = slices.DeleteFunc(pids, func(p int) bool { return p == self })
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v still run in cgroup %s after %s", pids, name, timeout)
		}
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// procsBelow lists the processes in dir's cgroup and every cgroup below it.
func procsBelow(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(raw)) {
			if p, err := strconv.Atoi(f); err == nil {
				pids = append(pids, p)
			}
		}
		return nil
	})
	return pids
}

// RemoveCgroup kills what is left in cgroup name and removes it, with every
// cgroup below it, from every hierarchy. A missing cgroup is not an error.
func RemoveCgroup(name string, timeout time.Duration) error {
	if err := KillCgroup(name, timeout); err != nil {
		return err
	}
	hs, err := hierarchies()
	if err != nil {
		return err
	}
	var errs []error
	for _, h := range hs {
		root := filepath.Join(h.mountPoint, name)
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		// Deepest first: a cgroup with children cannot be removed.
		for _, d := range slices.Backward(dirs) {
			if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
			}
		}
	}
	return errors.Join(errs...)
}
