package nodeinit

import (
	"os"
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
