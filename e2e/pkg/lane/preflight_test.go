package lane

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const gib = 1 << 30

func TestPreflightNeeds(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		want laneNeeds
	}{{
		// disk 512 MiB + 1 GiB; memory 4 GiB (the node) + 1 GiB + 512 MiB
		name: "one node of the default size",
		opts: Options{},
		want: laneNeeds{disk: 1536 << 20, inodes: 10000, memory: 5632 << 20, nodeMemory: 4 * gib, nodes: 1},
	}, {
		// disk 512 MiB + 2 × 1 GiB; memory 2 GiB + 1 GiB + 2 × 512 MiB
		name: "two nodes of 2 GiB",
		opts: Options{Nodes: 2, NodeMemory: 2 * gib},
		want: laneNeeds{disk: 2560 << 20, inodes: 20000, memory: 4 * gib, nodeMemory: 2 * gib, nodes: 2},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, needsOf(tc.opts), cmp.AllowUnexported(laneNeeds{})); diff != "" {
				t.Errorf("needsOf (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPreflightDisk(t *testing.T) {
	need := needsOf(Options{}) // 1.5 GiB, 10 000 inodes
	leftovers := []leftoverLane{{dir: "/tmp/ballast-e2e-1", bytes: 602 << 20}, {dir: "/tmp/ballast-e2e-2", bytes: 2 * gib}}
	for _, tc := range []struct {
		name      string
		st        diskStats
		leftovers []leftoverLane
		// want are what the refusal must say; none when the disk does.
		want []string
	}{{
		// 100 GiB: keep 10 % (10 GiB) + 1.5 GiB = 11.5 GiB ≤ 12 GiB free
		name: "room enough",
		st:   diskStats{size: 100 * gib, avail: 12 * gib, inodes: 1e6, freeInodes: 200000},
	}, {
		// 11.5 GiB exactly
		name: "room to the byte",
		st:   diskStats{size: 100 * gib, avail: 11*gib + 512<<20, inodes: 1e6, freeInodes: 110000},
	}, {
		// 11 GiB < 11.5 GiB
		name: "the lane's writes would go under the margin",
		st:   diskStats{size: 100 * gib, avail: 11 * gib, inodes: 1e6, freeInodes: 200000},
		want: []string{"/tmp", "11.0 GiB free of 100.0 GiB", "up to 1.5 GiB", "leave 10 % (10.0 GiB)", "nodefs.available 5 %", "disk pressure", "TMPDIR"},
	}, {
		// 1 GiB free of 4 GiB: the lane alone is 1.5 GiB
		name:      "a small filesystem, with earlier runs' dirs on it",
		st:        diskStats{size: 4 * gib, avail: gib, inodes: 1e6, freeInodes: 900000},
		leftovers: leftovers,
		want: []string{"1.0 GiB free of 4.0 GiB", "earlier failed runs kept 2.6 GiB in /tmp/ballast-e2e-1 (602 MiB), /tmp/ballast-e2e-2 (2.0 GiB)",
			"rm -rf /tmp/ballast-e2e-1 /tmp/ballast-e2e-2"},
	}, {
		// 11 GiB < 11.5 GiB, one earlier run's dir
		name:      "one earlier run's dir on it",
		st:        diskStats{size: 100 * gib, avail: 11 * gib, inodes: 1e6, freeInodes: 200000},
		leftovers: leftovers[:1],
		want:      []string{"earlier failed runs kept 602 MiB in /tmp/ballast-e2e-1 there", "rm -rf /tmp/ballast-e2e-1"},
	}, {
		// keep 10 % of 1 000 000 = 100 000 + 10 000 > 109 999
		name: "too few inodes",
		st:   diskStats{size: 100 * gib, avail: 50 * gib, inodes: 1e6, freeInodes: 109999},
		want: []string{"109999 inodes free of 1000000", "up to 10000 files", "leave 10 % (100000)", "nodefs.inodesFree 5 %"},
	}, {
		// btrfs counts no inodes: nothing to check
		name: "a filesystem without an inode count",
		st:   diskStats{size: 100 * gib, avail: 50 * gib},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkDisk("/tmp", tc.st, need, tc.leftovers)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted, want a refusal")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("refusal %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestPreflightMemory(t *testing.T) {
	need := needsOf(Options{Nodes: 2}) // 4 GiB + 1 GiB + 2 × 512 MiB = 6 GiB
	if err := checkMemory(6*gib, need); err != nil {
		t.Errorf("6 GiB available: %v", err)
	}
	err := checkMemory(6*gib-1, need)
	if err == nil {
		t.Fatal("a byte short of 6 GiB: accepted")
	}
	for _, w := range []string{"6.0 GiB of memory available", "needs 6.0 GiB", "4.0 GiB for the node the tests fill", "1.0 GiB for the control plane", "512 MiB per node for its daemons and pods (2 nodes)"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
}

func TestPreflightLeftoverProcesses(t *testing.T) {
	prefix := lanePrefix("/tmp")
	procs := []runningProcess{
		{pid: 10, args: []string{"/src/_output/e2e/bin/kubelet", "--config=/tmp/ballast-e2e-123/node/kubelet/config.yaml", "--hostname-override=ballast-e2e-node"}},
		{pid: 11, args: []string{"kube-apiserver", "--cert-dir=/tmp/ballast-e2e-123/apiserver-certs"}},
		{pid: 12, args: []string{"containerd-shim-runc-v2", "-address", "/tmp/ballast-e2e-9/node/containerd/containerd.sock"}},
		// Reading an earlier lane's logs is no lane's doing.
		{pid: 20, args: []string{"tail", "-f", "/tmp/ballast-e2e-123/kube-apiserver.log"}},
		// The machine's own kubelet, and a node named like the lane's.
		{pid: 21, args: []string{"/usr/bin/kubelet", "--config=/var/lib/kubelet/config.yaml", "--hostname-override=ballast-e2e-node"}},
		// The program starting the lane.
		{pid: 22, args: []string{"kubelet", "/tmp/ballast-e2e-123"}},
		// A lane's program named but nothing in a lane's dir: not the lane's.
		{pid: 23, args: []string{"containerd"}},
	}
	found := leftoverProcesses(procs, prefix, 22)
	var pids []int
	for _, p := range found {
		pids = append(pids, p.pid)
	}
	if diff := cmp.Diff([]int{10, 11, 12}, pids); diff != "" {
		t.Fatalf("leftover processes (-want,+got):\n%s", diff)
	}
	err := checkProcesses(found)
	if err == nil {
		t.Fatal("leftover processes accepted")
	}
	for _, w := range []string{"10 (kubelet), 11 (kube-apiserver), 12 (containerd-shim-runc-v2)", "kill 10 11 12"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
	if err := checkProcesses(nil); err != nil {
		t.Errorf("no leftover process: %v", err)
	}
}

// The machine's own processes read from /proc include this test's, which is
// never a leftover.
func TestPreflightListsProcesses(t *testing.T) {
	procs, err := listProcesses()
	if err != nil {
		t.Fatal(err)
	}
	self := false
	for _, p := range procs {
		self = self || p.pid == os.Getpid() && len(p.args) > 0
	}
	if !self {
		t.Errorf("this process (%d) is not among the %d listed", os.Getpid(), len(procs))
	}
}

func TestPreflightFindsLeftoverLanes(t *testing.T) {
	tmp := t.TempDir()
	kept := filepath.Join(tmp, "ballast-e2e-42")
	if err := os.MkdirAll(filepath.Join(kept, "node"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kept, "node", "kubelet.log"), make([]byte, 3<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	// Neither a lane's dir nor a dir.
	if err := os.MkdirAll(filepath.Join(tmp, "ballast-e2ex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "ballast-e2e-file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := findLeftoverLanes(tmp)
	if len(got) != 1 || got[0].dir != kept {
		t.Fatalf("leftover lanes %+v, want %s only", got, kept)
	}
	// 3 MiB of zeros, as the filesystem holds them: all of it, or a sparse
	// file's blocks, but never more than the file and its dirs.
	if got[0].bytes > 3<<20+1<<20 {
		t.Errorf("%s holds %d bytes, want at most some 3 MiB", kept, got[0].bytes)
	}
}

func TestPreflightReadsMeminfo(t *testing.T) {
	const info = "MemTotal:       24576000 kB\nMemFree:        16000000 kB\nMemAvailable:   22000000 kB\n"
	for _, tc := range []struct {
		name, field, info string
		want              int64
		err               string
	}{
		{name: "available", field: "MemAvailable", info: info, want: 22000000 * 1024},
		{name: "total", field: "MemTotal", info: info, want: 24576000 * 1024},
		{name: "missing", field: "MemAvailable", info: "MemTotal: 1 kB\n", err: "no MemAvailable"},
		{name: "not a number", field: "MemAvailable", info: "MemAvailable: lots kB\n", err: `MemAvailable is "lots"`},
		{name: "beyond int64 in bytes", field: "MemAvailable", info: "MemAvailable: 99999999999999999 kB\n", err: "not a size in KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseMeminfo(strings.NewReader(tc.info), tc.field)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %d, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// The kubelet runs with the thresholds preflight checks the disk against.
func TestPreflightThresholdsAreTheKubelets(t *testing.T) {
	dir := t.TempDir()
	if _, err := writeNodeFiles(nodeConfig{Dir: dir, Eviction: evictionHard}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "kubelet", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		EvictionHard map[string]string `json:"evictionHard"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"memory.available":  evictionHard.MemoryAvailable,
		"nodefs.available":  fmt.Sprintf("%d%%", evictionHard.NodefsAvailable),
		"nodefs.inodesFree": fmt.Sprintf("%d%%", evictionHard.NodefsInodesFree),
		"imagefs.available": fmt.Sprintf("%d%%", evictionHard.ImagefsAvailable),
	}
	if diff := cmp.Diff(want, cfg.EvictionHard); diff != "" {
		t.Errorf("the kubelet's evictionHard (-want,+got):\n%s", diff)
	}
	if evictionHard.NodefsAvailable == 0 || evictionHard.ImagefsAvailable == 0 || evictionHard.NodefsInodesFree == 0 {
		t.Errorf("evictionHard %+v leaves a disk threshold out", evictionHard)
	}
}
