package k3s

import (
	"bytes"
	"fmt"
	"os"
)

// managedMarker starts every host file Ballast owns; Ballast never overwrites
// or removes a file without it.
const managedMarker = "# Managed by ballast (ballast install --mode replaceDefault); ballast uninstall removes it.\n"

// bootstrapSchedulerConfig is the configuration k3s's embedded kube-scheduler
// loads in replaceDefault mode: one profile under a name only Ballast's own
// pods use, so Ballast can serve default-scheduler while its own pods never
// depend on it. With --config set, kube-scheduler ignores k3s's --kubeconfig
// flag, so the config names k3s's scheduler credential itself.
func bootstrapSchedulerConfig(p Paths, schedulerName string) []byte {
	return []byte(managedMarker + fmt.Sprintf(`apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: %s
profiles:
  - schedulerName: %s
`, p.SchedulerKubeconfigInK3s(), schedulerName))
}

// dropIn makes k3s pass the bootstrap config to its embedded scheduler; the
// "+" appends to any kube-scheduler-arg the administrator already set.
func dropIn(p Paths) []byte {
	return []byte(managedMarker + fmt.Sprintf(`kube-scheduler-arg+:
  - config=%s
`, p.BootstrapSchedulerConfigInK3s()))
}

// ensureManaged refuses to touch path when it exists without Ballast's marker.
func ensureManaged(path string) error {
	return ensureStartsWith(path, managedMarker, "was not written by ballast; move it away or merge it by hand")
}

// enableBootstrapScheduler writes the drop-in and the config it points to. It
// reports whether anything changed, which means k3s must restart.
func enableBootstrapScheduler(ops *fileOps, p Paths, schedulerName string) (bool, error) {
	for _, path := range []string{p.DropIn(), p.BootstrapSchedulerConfig()} {
		if err := ensureManaged(path); err != nil {
			return false, err
		}
	}
	// The config first: k3s must never see a drop-in pointing at a missing file.
	changedConfig, err := ops.write(p.BootstrapSchedulerConfig(), bootstrapSchedulerConfig(p, schedulerName), 0o600)
	if err != nil {
		return false, err
	}
	changedDropIn, err := ops.write(p.DropIn(), dropIn(p), 0o600)
	if err != nil {
		return false, err
	}
	return changedConfig || changedDropIn, nil
}

// bootstrapSchedulerEnabled reports whether the drop-in and the config it
// points to are in place with exactly this content.
func bootstrapSchedulerEnabled(p Paths, schedulerName string) (bool, error) {
	for path, want := range map[string][]byte{p.DropIn(): dropIn(p), p.BootstrapSchedulerConfig(): bootstrapSchedulerConfig(p, schedulerName)} {
		got, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read %s: %w", path, err)
		}
		if !bytes.Equal(got, want) {
			return false, nil
		}
	}
	return true, nil
}

// disableBootstrapScheduler removes what enableBootstrapScheduler wrote and
// reports whether the drop-in existed (then k3s must restart).
func disableBootstrapScheduler(ops *fileOps, p Paths) (bool, error) {
	for _, path := range []string{p.DropIn(), p.BootstrapSchedulerConfig()} {
		if err := ensureManaged(path); err != nil {
			return false, err
		}
	}
	// The drop-in first, so k3s never points at a config that is gone.
	removed, err := ops.remove(p.DropIn())
	if err != nil {
		return false, err
	}
	if _, err := ops.remove(p.BootstrapSchedulerConfig()); err != nil {
		return false, err
	}
	return removed, nil
}

// admissionPolicyDropIn turns on the beta MutatingAdmissionPolicy API of a
// 1.34 or 1.35 API server (GA and on by default from 1.36), which the
// chart's namespace opt-in needs; "+" appends to the administrator's args.
func admissionPolicyDropIn() []byte {
	return []byte(managedMarker + `kube-apiserver-arg+:
  - feature-gates=MutatingAdmissionPolicy=true
  - runtime-config=admissionregistration.k8s.io/v1beta1=true
`)
}

// setAdmissionPolicyGate writes or removes the admission policy drop-in and
// reports whether anything changed (then k3s must restart).
func setAdmissionPolicyGate(ops *fileOps, p Paths, on bool) (bool, error) {
	path := p.AdmissionPolicyDropIn()
	if err := ensureManaged(path); err != nil {
		return false, err
	}
	if on {
		return ops.write(path, admissionPolicyDropIn(), 0o600)
	}
	return ops.remove(path)
}

// isManaged reports whether path holds a file Ballast wrote; whyNot says
// why not, for a file that exists.
func isManaged(path string) (ok bool, whyNot string) {
	if err := ensureManaged(path); err != nil {
		return false, "it was not written by ballast (it does not start with Ballast's marker line)"
	}
	return true, ""
}
