package k3sserver

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigArgs(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string // relative to /etc/rancher/k3s
		want  []string
	}{
		{name: "nothing", want: nil},
		{name: "config.yaml alone", files: map[string]string{"config.yaml": "node-name: s1\nkube-scheduler-arg:\n  - v=2\ndisable-helm-controller: false\n"},
			want: []string{"--node-name=s1", "--kube-scheduler-arg=v=2", "--disable-helm-controller=false"}},
		// Ballast's drop-in appends to what config.yaml sets.
		{name: "drop-in appends with +", files: map[string]string{
			"config.yaml": "kube-scheduler-arg:\n  - v=2\n",
			"config.yaml.d/90-ballast-scheduler.yaml": "# Managed by ballast\nkube-scheduler-arg+:\n  - config=/var/lib/rancher/k3s/server/ballast/bootstrap-scheduler.yaml\n",
		}, want: []string{"--kube-scheduler-arg=v=2", "--kube-scheduler-arg=config=/var/lib/rancher/k3s/server/ballast/bootstrap-scheduler.yaml"}},
		{name: "a later drop-in replaces without +", files: map[string]string{
			"config.yaml":                 "kube-scheduler-arg: [v=2]\nnode-name: s1\n",
			"config.yaml.d/10-a.yaml":     "kube-scheduler-arg: [v=4]\n",
			"config.yaml.d/20-b.yml":      "node-name: s2\n",
			"config.yaml.d/30-c.conf":     "node-name: ignored\n",
			"config.yaml.d/05-first.yaml": "write-kubeconfig-mode: \"0644\"\n",
		}, want: []string{"--kube-scheduler-arg=v=4", "--node-name=s2", "--write-kubeconfig-mode=0644"}},
		{name: "drop-ins without config.yaml", files: map[string]string{
			"config.yaml.d/90-ballast-scheduler.yaml": "kube-scheduler-arg+:\n  - config=/x.yaml\n",
		}, want: []string{"--kube-scheduler-arg=config=/x.yaml"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range tc.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ConfigArgs(filepath.Join(dir, "config.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ConfigArgs (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestConfigArgsRefusesMaps(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("kube-scheduler-arg:\n  config: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ConfigArgs(filepath.Join(dir, "config.yaml")); err == nil {
		t.Error("ConfigArgs took a map as a flag value")
	}
}

func TestComponentArgs(t *testing.T) {
	defaults := map[string]string{"kubeconfig": "/cred/scheduler.kubeconfig", "secure-port": "10259", "feature-gates": "A=true"}
	tests := []struct {
		name  string
		extra []string
		want  []string
	}{
		{name: "defaults, sorted", want: []string{"--feature-gates=A=true", "--kubeconfig=/cred/scheduler.kubeconfig", "--secure-port=10259"}},
		{name: "an extra argument is added", extra: []string{"config=/b.yaml"},
			want: []string{"--config=/b.yaml", "--feature-gates=A=true", "--kubeconfig=/cred/scheduler.kubeconfig", "--secure-port=10259"}},
		{name: "replaces a default", extra: []string{"secure-port=0"},
			want: []string{"--feature-gates=A=true", "--kubeconfig=/cred/scheduler.kubeconfig", "--secure-port=0"}},
		{name: "+ appends to a default, - goes before it", extra: []string{"feature-gates+=B=true", "kubeconfig-=/other"},
			want: []string{"--feature-gates=A=true", "--feature-gates=B=true", "--kubeconfig=/other", "--kubeconfig=/cred/scheduler.kubeconfig", "--secure-port=10259"}},
		{name: "repeated name keeps every value", extra: []string{"v=2", "v=4", "leader-elect"},
			want: []string{"--feature-gates=A=true", "--kubeconfig=/cred/scheduler.kubeconfig", "--leader-elect=true", "--secure-port=10259", "--v=2", "--v=4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, ComponentArgs(defaults, tc.extra)); diff != "" {
				t.Errorf("ComponentArgs (-want,+got):\n%s", diff)
			}
		})
	}
	if len(defaults) != 3 {
		t.Errorf("ComponentArgs changed its defaults: %v", defaults)
	}
}

func TestNodeArgs(t *testing.T) {
	got, err := NodeArgs([]string{"server", "--kube-scheduler-arg=config=/x.yaml", "--cluster-init", "--node-name=s1"})
	if err != nil {
		t.Fatal(err)
	}
	want := `["server","--kube-scheduler-arg","config=/x.yaml","--cluster-init","--node-name","s1"]`
	if got != want {
		t.Errorf("NodeArgs = %s, want %s", got, want)
	}
}
