package app

import (
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/klog/v2"
)

// cgroupMemoryMax is the cgroup v2 memory limit of the container.
const cgroupMemoryMax = "/sys/fs/cgroup/memory.max"

// memoryLimitShare is the part of the container's memory limit given to the
// Go heap; the rest covers the binary, stacks and the runtime.
const memoryLimitShare = 0.75

// setMemoryLimit gives the Go garbage collector a soft limit of 75 % of the
// container's memory limit, unless GOMEMLIMIT is set. Without it the heap
// may grow to twice the live data between collections, and a container
// sized for the live data would be killed.
func setMemoryLimit(lookup func(string) (string, bool), maxFile string) (int64, bool) {
	if _, set := lookup("GOMEMLIMIT"); set {
		return 0, false
	}
	raw, err := os.ReadFile(maxFile)
	if err != nil {
		return 0, false
	}
	limit, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64)
	if err != nil || limit <= 0 { // "max": no limit
		return 0, false
	}
	soft := int64(float64(limit) * memoryLimitShare)
	debug.SetMemoryLimit(soft)
	klog.V(1).InfoS("Set the Go memory limit from the container's", "containerLimit", limit, "goMemoryLimit", soft)
	return soft, true
}
