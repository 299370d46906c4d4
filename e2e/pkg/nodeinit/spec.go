// Package nodeinit is the inside of a real node of the end-to-end lane: the
// node's cgroup (JoinCgroup, KillCgroup, RemoveCgroup, run on the host) and
// its init process (Run, inside the node's namespaces), which ballast-node
// wraps.
package nodeinit

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// Spec is what ballast-node reads: where the node lives and what it runs.
type Spec struct {
	// Cgroup is the node's cgroup below the root of every hierarchy, such as
	// "/ballast-e2e/node-1".
	Cgroup string `json:"cgroup"`
	// NetNS is the node's network namespace file, such as
	// /run/netns/ballast-e2e-node-1.
	NetNS string `json:"netns"`
	// PrivateDirs get an empty tmpfs inside the node, so what the daemons
	// keep at fixed host paths (the kubelet's /var/log/containers, pod
	// network namespaces under /run/netns, the CNI cache) stays in the node
	// and goes with it.
	PrivateDirs []string `json:"privateDirs,omitempty"`
	// ReadyFile is created once every process is ready.
	ReadyFile string `json:"readyFile"`
	// Processes start in order; each must be ready before the next starts.
	Processes []Process `json:"processes"`
}

// Process is one daemon of the node.
type Process struct {
	Name string   `json:"name"`
	Path string   `json:"path"`
	Args []string `json:"args,omitempty"`
	// Log receives the process's stdout and stderr.
	Log string `json:"log"`
	// ReadyFile, when set, is a file (a socket) the process creates when it
	// is ready; ReadyURL is an http URL that answers 200 then. With neither,
	// the process is ready once started.
	ReadyFile string `json:"readyFile,omitempty"`
	ReadyURL  string `json:"readyURL,omitempty"`
	// ReadyTimeout bounds the wait; 0 means a minute.
	ReadyTimeout Duration `json:"readyTimeout,omitempty"`
}

// Duration is a time.Duration written as "30s" in JSON.
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return []byte(`"` + d.String() + `"`), nil }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	v, err := time.ParseDuration(strings.Trim(string(b), `"`))
	if err != nil {
		return fmt.Errorf("duration %s: %w", b, err)
	}
	d.Duration = v
	return nil
}

// Validate reports every missing or malformed field at once.
func (s Spec) Validate() error {
	var errs []error
	if !filepath.IsAbs(s.Cgroup) || filepath.Clean(s.Cgroup) == "/" {
		errs = append(errs, fmt.Errorf("cgroup: %q must be an absolute path below the root", s.Cgroup))
	}
	if !filepath.IsAbs(s.NetNS) {
		errs = append(errs, fmt.Errorf("netns: %q must be an absolute path", s.NetNS))
	}
	for i, d := range s.PrivateDirs {
		if !filepath.IsAbs(d) {
			errs = append(errs, fmt.Errorf("privateDirs[%d]: %q must be an absolute path", i, d))
		}
	}
	if s.ReadyFile == "" {
		errs = append(errs, errors.New("readyFile: required"))
	}
	if len(s.Processes) == 0 {
		errs = append(errs, errors.New("processes: at least one is required"))
	}
	for i, p := range s.Processes {
		if p.Name == "" || !filepath.IsAbs(p.Path) || p.Log == "" {
			errs = append(errs, fmt.Errorf("processes[%d]: name, an absolute path and log are required", i))
		}
	}
	return errors.Join(errs...)
}
