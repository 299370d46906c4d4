package k3sserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/klog/v2/ktesting"
)

func TestParseServerArgs(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	files := map[string]string{
		config: "node-name: server-1\nflannel-backend: none\nkube-scheduler-arg: [v=2]\n",
		filepath.Join(config+".d", "90-ballast.yaml"): "kube-scheduler-arg+:\n  - config=/b.yaml\n",
	}
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	_, ctx := ktesting.NewTestContext(t)
	f, nodeArgs, err := parseServerArgs(ctx, []string{"--config", config, "--helm-job-image=img:1", "--kube-scheduler-arg=leader-elect=false"})
	if err != nil {
		t.Fatal(err)
	}
	// The configuration's flags first (flannel-backend, unknown to the
	// lane, dropped), the command line's after.
	wantArgs := []string{"server", "--node-name=server-1", "--kube-scheduler-arg=v=2", "--kube-scheduler-arg=config=/b.yaml",
		"--config", config, "--helm-job-image=img:1", "--kube-scheduler-arg=leader-elect=false"}
	if diff := cmp.Diff(wantArgs, nodeArgs); diff != "" {
		t.Errorf("node args (-want,+got):\n%s", diff)
	}
	if f.nodeName != "server-1" || f.helmJobImage != "img:1" {
		t.Errorf("node name %q, job image %q; want server-1, img:1", f.nodeName, f.helmJobImage)
	}
	wantSched := []string{"v=2", "config=/b.yaml", "leader-elect=false"}
	if diff := cmp.Diff(wantSched, f.schedulerArgs); diff != "" {
		t.Errorf("kube-scheduler args (-want,+got):\n%s", diff)
	}
	if _, _, err := parseServerArgs(ctx, []string{"--config", config, "--no-such-flag"}); err == nil {
		t.Error("an unknown flag on the command line was accepted")
	}
}

func TestSchedulerArgs(t *testing.T) {
	got := SchedulerArgs([]string{"config=" + DataDir + "/server/ballast/bootstrap-scheduler.yaml"})
	want := []string{
		"--authentication-kubeconfig=" + SchedulerKubeconfig,
		"--authorization-kubeconfig=" + SchedulerKubeconfig,
		"--bind-address=127.0.0.1",
		"--config=" + DataDir + "/server/ballast/bootstrap-scheduler.yaml",
		"--kubeconfig=" + SchedulerKubeconfig,
		"--profiling=false",
		"--secure-port=10259",
		"--tls-cert-file=" + SchedulerCert,
		"--tls-private-key-file=" + SchedulerKey,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("SchedulerArgs (-want,+got):\n%s", diff)
	}
}
