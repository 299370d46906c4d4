package nodeinit

import (
	"os"
	"path/filepath"
	"testing"
)

// The lane's machines mount their cgroup hierarchies under /sys/fs/cgroup;
// hierarchies must find them with the options to mount them again.
func TestHierarchiesOfThisMachine(t *testing.T) {
	if _, err := os.Stat(cgroupRoot); err != nil {
		t.Skipf("no %s here", cgroupRoot)
	}
	hs, err := hierarchies()
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		if h.fsType == "cgroup" && h.options == "" {
			t.Errorf("v1 hierarchy %s has no controller options to remount it with", h.mountPoint)
		}
		for _, o := range []string{"rw", "ro"} {
			if h.options == o {
				t.Errorf("hierarchy %s keeps the mount flag %q among its options", h.mountPoint, o)
			}
		}
	}
}

func TestEnableControllers(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("cpuset cpu io memory hugetlb pids rdma misc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := enableControllers(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		t.Fatal(err)
	}
	// The node's controllers only, in the order the kernel lists them.
	if want := "+cpuset +cpu +io +memory +hugetlb +pids"; string(got) != want {
		t.Errorf("subtree_control = %q, want %q", got, want)
	}
}

func TestUnified(t *testing.T) {
	v2 := []hierarchy{{mountPoint: cgroupRoot, fsType: "cgroup2"}}
	hybrid := []hierarchy{{mountPoint: cgroupRoot + "/memory", fsType: "cgroup", options: "memory"}, {mountPoint: cgroupRoot + "/unified", fsType: "cgroup2"}}
	if !unified(v2) || unified(hybrid) {
		t.Errorf("unified(v2) = %t, unified(hybrid) = %t; want true, false", unified(v2), unified(hybrid))
	}
}
