package lane

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// What a lane needs of the machine beyond its programs. The disk figures
// were measured on a one-node lane a minute into its run: its dir held
// 602 MiB in 728 files, 478 MiB of them containerd's (110 MiB of image
// content, the lane's and Ballast's image tarballs, and 367 MiB of it
// unpacked) and 124 MiB etcd's. The budgets below are about twice that, for
// a run of up to 40 minutes: pod logs, the images the tests import later
// (hog, hostile), etcd's growth.
const (
	// laneDiskControlPlane is what etcd and the control plane's logs write.
	laneDiskControlPlane = 512 << 20
	// laneDiskPerNode is what each node's containerd, kubelet and pods
	// write.
	laneDiskPerNode = 1 << 30
	// laneInodesPerNode is the files each node makes, with the control
	// plane's: over ten times the whole one-node lane's count, as the
	// images the lane runs are static binaries of few files, where an image
	// of a distribution has thousands.
	laneInodesPerNode = 10000
	// diskMarginPoints is how far above the kubelet's disk eviction
	// thresholds (evictionHard) free space and free inodes must stay once
	// the lane has written what it needs: the filesystem is the machine's
	// temporary one, which other work fills meanwhile (build caches, test
	// dirs), and the kubelet acts on its own samples.
	diskMarginPoints = 5
	// laneMemoryControlPlane is a budget for kube-apiserver, the
	// controller-manager, the scheduler and etcd in the test process on a
	// cluster of a few nodes and pods; laneMemoryPerNode one for a node's
	// containerd, kubelet and kube-proxy, its system pods (CoreDNS,
	// metrics-server) and Ballast's three components (12–17 MiB each,
	// docs/performance.md). Neither is a measurement; both are generous.
	laneMemoryControlPlane = 1 << 30
	laneMemoryPerNode      = 512 << 20
)

// laneBinaries are the programs of Options.BinDir a lane runs.
var laneBinaries = []string{"kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubelet", "kube-proxy",
	"containerd", "containerd-shim-runc-v2", "ctr", "ballast-node", "ballast-k3s"}

// preflight checks that the lane's programs, images and the host's
// commands are there.
func preflight(opts Options) error {
	var missing []string
	for _, b := range laneBinaries {
		if b == "ballast-k3s" && !opts.K3s {
			continue
		}
		if _, err := os.Stat(filepath.Join(opts.BinDir, b)); err != nil {
			missing = append(missing, filepath.Join(opts.BinDir, b)+" (make e2e-bins)")
		}
	}
	for _, f := range append([]string{"/usr/bin/runc", "/usr/lib/cni/bridge", "/usr/lib/cni/host-local", "/usr/lib/cni/loopback"}, opts.Images...) {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, f)
		}
	}
	for _, c := range []string{"ip", "iptables", "nsenter", "unshare", "sysctl"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c+" (hack/install-test-deps.sh)")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the end-to-end lane is missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

// checkHost checks that the machine can hold the lane opts describes: no
// process of an earlier lane still running, room on the filesystem of the
// lane's dir and memory. It reports every problem at once, and warns on w
// about the dirs earlier failed runs kept when they leave room enough.
// Callers hold the lane's lock and have removed what a crashed run left in
// the lane's cgroups.
func checkHost(opts Options, w io.Writer) error {
	tmp := os.TempDir()
	need := needsOf(opts)
	var errs []error
	if procs, err := listProcesses(); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, checkProcesses(leftoverProcesses(procs, lanePrefix(tmp), os.Getpid())))
	}
	leftovers := findLeftoverLanes(tmp)
	if st, err := statDisk(tmp); err != nil {
		errs = append(errs, err)
	} else if err := checkDisk(tmp, st, need, leftovers); err != nil {
		errs = append(errs, err)
	} else if len(leftovers) > 0 {
		fmt.Fprintf(w, "ballast e2e: earlier failed runs kept %s for their logs; remove them once read (rm -rf %s)\n",
			describeLeftovers(leftovers), strings.Join(leftoverDirs(leftovers), " "))
	}
	if avail, err := meminfo("MemAvailable"); err != nil {
		errs = append(errs, err)
	} else {
		errs = append(errs, checkMemory(avail, need))
	}
	return errors.Join(errs...)
}

// laneNeeds is what a lane needs of the machine.
type laneNeeds struct {
	// disk and inodes are what it writes in its dir.
	disk, inodes uint64
	// memory is what it uses, nodeMemory of it the node the tests fill.
	memory, nodeMemory int64
	nodes              int
}

// needsOf is what the lane opts describes needs. The tests fill a node's
// memory to over 90 % of what the kubelet offers (the journey's hog takes
// the node to 96 %, the faults suite's to 92 %): the machine must hold one
// node's NodeMemory besides the lane's daemons.
func needsOf(opts Options) laneNeeds {
	nodes := max(opts.Nodes, 1)
	nodeMemory := opts.NodeMemory
	if nodeMemory == 0 {
		nodeMemory = defaultNodeMemory
	}
	return laneNeeds{
		disk:       laneDiskControlPlane + uint64(nodes)*laneDiskPerNode,
		inodes:     uint64(nodes) * laneInodesPerNode,
		memory:     nodeMemory + laneMemoryControlPlane + int64(nodes)*laneMemoryPerNode,
		nodeMemory: nodeMemory,
		nodes:      nodes,
	}
}

// diskStats are a filesystem's figures as the kubelet reads them: avail is
// what unprivileged users may take (statfs's f_bavail, the kubelet's
// nodefs.available); inodes is zero on a filesystem without a fixed count
// (btrfs).
type diskStats struct {
	size, avail, inodes, freeInodes uint64
}

// statDisk reads the figures of the filesystem holding dir.
func statDisk(dir string) (diskStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return diskStats{}, fmt.Errorf("reading the free space of %s: %w", dir, err)
	}
	unit := uint64(st.Frsize)
	if unit == 0 {
		unit = uint64(st.Bsize)
	}
	return diskStats{size: st.Blocks * unit, avail: st.Bavail * unit, inodes: st.Files, freeInodes: st.Ffree}, nil
}

// checkDisk checks that the filesystem of dir, whose figures are st, has
// room for what the lane writes, and keeps diskMarginPoints above the
// kubelet's eviction thresholds after: otherwise the node is tainted for
// disk pressure mid-run and its pods evicted. A refusal names the dirs
// earlier failed runs kept there.
func checkDisk(dir string, st diskStats, need laneNeeds, leftovers []leftoverLane) error {
	var problems []string
	spacePct := max(evictionHard.NodefsAvailable, evictionHard.ImagefsAvailable) + diskMarginPoints
	if keep := st.size / 100 * uint64(spacePct); st.avail < need.disk+keep {
		problems = append(problems, fmt.Sprintf("%s free of %s, where the lane writes up to %s and must leave %d %% (%s) free",
			bytesOf(st.avail), bytesOf(st.size), bytesOf(need.disk), spacePct, bytesOf(keep)))
	}
	inodesPct := evictionHard.NodefsInodesFree + diskMarginPoints
	if keep := st.inodes / 100 * uint64(inodesPct); st.inodes > 0 && st.freeInodes < need.inodes+keep {
		problems = append(problems, fmt.Sprintf("%d inodes free of %d, where the lane makes up to %d files and must leave %d %% (%d) free",
			st.freeInodes, st.inodes, need.inodes, inodesPct, keep))
	}
	if len(problems) == 0 {
		return nil
	}
	msg := fmt.Sprintf("the filesystem of %s, where the lane runs, has %s: under the kubelet's eviction thresholds "+
		"(nodefs.available %d %%, imagefs.available %d %%, nodefs.inodesFree %d %%) its node would be tainted for disk pressure mid-run. "+
		"Free some of it, or point TMPDIR at a larger filesystem",
		dir, strings.Join(problems, ", and "), evictionHard.NodefsAvailable, evictionHard.ImagefsAvailable, evictionHard.NodefsInodesFree)
	if len(leftovers) > 0 {
		msg += fmt.Sprintf("; earlier failed runs kept %s there for their logs: rm -rf %s", describeLeftovers(leftovers), strings.Join(leftoverDirs(leftovers), " "))
	}
	return errors.New(msg)
}

// checkMemory checks that avail, the machine's available memory, holds
// what the lane needs.
func checkMemory(avail int64, need laneNeeds) error {
	if avail >= need.memory {
		return nil
	}
	nodes := "1 node"
	if need.nodes != 1 {
		nodes = fmt.Sprintf("%d nodes", need.nodes)
	}
	return fmt.Errorf("the machine has %s of memory available (MemAvailable in /proc/meminfo), and the lane needs %s: "+
		"%s for the node the tests fill, %s for the control plane and %s per node for its daemons and pods (%s). "+
		"Stop what else uses memory",
		bytesOf(uint64(max(avail, 0))), bytesOf(uint64(need.memory)), bytesOf(uint64(need.nodeMemory)),
		bytesOf(laneMemoryControlPlane), bytesOf(laneMemoryPerNode), nodes)
}

// lanePrefix is how the dirs of lanes start: os.MkdirTemp's, in tmp.
func lanePrefix(tmp string) string { return filepath.Join(tmp, "ballast-e2e-") }

// leftoverLane is a lane's dir that a failed run kept.
type leftoverLane struct {
	dir   string
	bytes uint64
}

// findLeftoverLanes lists the lane dirs in tmp, with what they hold on
// disk. Failed runs keep them for their logs; the lane starting has not
// made its own yet. Sizes are a best effort: what cannot be read counts
// for nothing.
func findLeftoverLanes(tmp string) []leftoverLane {
	dirs, _ := filepath.Glob(lanePrefix(tmp) + "*")
	var out []leftoverLane
	for _, d := range dirs {
		if fi, err := os.Lstat(d); err != nil || !fi.IsDir() {
			continue
		}
		out = append(out, leftoverLane{dir: d, bytes: diskUsage(d)})
	}
	return out
}

// diskUsage is what the files under dir take on its filesystem, as du
// counts it; mounts below dir (a crashed node's) are not counted.
func diskUsage(dir string) uint64 {
	root, err := os.Lstat(dir)
	if err != nil {
		return 0
	}
	dev := root.Sys().(*syscall.Stat_t).Dev
	var total uint64
	_ = filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Dev != dev {
			return filepath.SkipDir
		}
		total += uint64(st.Blocks) * 512
		return nil
	})
	return total
}

func leftoverDirs(ls []leftoverLane) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.dir
	}
	return out
}

// describeLeftovers names the dirs with their sizes and their total.
func describeLeftovers(ls []leftoverLane) string {
	if len(ls) == 1 {
		return fmt.Sprintf("%s in %s", bytesOf(ls[0].bytes), ls[0].dir)
	}
	var total uint64
	named := make([]string, len(ls))
	for i, l := range ls {
		total += l.bytes
		named[i] = fmt.Sprintf("%s (%s)", l.dir, bytesOf(l.bytes))
	}
	return fmt.Sprintf("%s in %s", bytesOf(total), strings.Join(named, ", "))
}

// runningProcess is a process's ID and command line.
type runningProcess struct {
	pid  int
	args []string
}

// listProcesses reads the command line of every process of the machine;
// those that end meanwhile, or that cannot be read, are left out.
func listProcesses() ([]runningProcess, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var out []runningProcess
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue
		}
		out = append(out, runningProcess{pid: pid, args: strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")})
	}
	return out, nil
}

// leftoverProcesses are the processes of procs, other than self, that are
// one of the lane's programs run with a path under a lane's dir (prefix):
// an earlier lane's daemons that its cgroups did not hold, so that Start
// could not stop them. A shell or an editor reading such a dir's logs is no
// lane's.
func leftoverProcesses(procs []runningProcess, prefix string, self int) []runningProcess {
	var out []runningProcess
	for _, p := range procs {
		if p.pid == self || len(p.args) == 0 || !slices.Contains(laneBinaries, filepath.Base(p.args[0])) {
			continue
		}
		if slices.ContainsFunc(p.args[1:], func(a string) bool { return strings.Contains(a, prefix) }) {
			out = append(out, p)
		}
	}
	return out
}

// checkProcesses refuses to start beside an earlier lane's processes: they
// hold the lane's addresses and ports, and its memory.
func checkProcesses(found []runningProcess) error {
	if len(found) == 0 {
		return nil
	}
	named := make([]string, len(found))
	pids := make([]string, len(found))
	for i, p := range found {
		named[i] = fmt.Sprintf("%d (%s)", p.pid, filepath.Base(p.args[0]))
		pids[i] = strconv.Itoa(p.pid)
	}
	return fmt.Errorf("processes of an earlier end-to-end lane still run, outside the lane's cgroups: %s. "+
		"They hold the lane's addresses and memory; stop them (kill %s)", strings.Join(named, ", "), strings.Join(pids, " "))
}

// bytesOf writes n in MiB, or GiB from 1 GiB.
func bytesOf(n uint64) string {
	if n >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	}
	return fmt.Sprintf("%d MiB", n>>20)
}
