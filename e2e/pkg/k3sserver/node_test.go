package k3sserver

import (
	"os"
	"path/filepath"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ballast-sched/ballast/installer/pkg/k3s"
)

// TestInstallerReadsNodeArgs holds what the lane records on its Node to
// what `ballast install` reads there: with Ballast's drop-in in
// config.yaml.d the server is converted, without it it is not.
func TestInstallerReadsNodeArgs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dropIn string
		want   k3s.SchedulerState
	}{
		{name: "without the drop-in", want: k3s.SchedulerDefault},
		{name: "with the drop-in", dropIn: "kube-scheduler-arg+:\n  - config=" + DataDir + "/server/ballast/bootstrap-scheduler.yaml\n",
			want: k3s.SchedulerConverted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			config := filepath.Join(dir, "config.yaml")
			if err := os.WriteFile(config, []byte("node-name: server-1\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if tc.dropIn != "" {
				if err := os.MkdirAll(config+".d", 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(config+".d", "90-ballast-scheduler.yaml"), []byte(tc.dropIn), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			args, err := ConfigArgs(config)
			if err != nil {
				t.Fatal(err)
			}
			annotation, err := NodeArgs(append([]string{"server"}, append(args, "--helm-job-image=x")...))
			if err != nil {
				t.Fatal(err)
			}
			node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "server-1",
				Labels:      map[string]string{LabelControlPlane: "true", LabelMaster: "true"},
				Annotations: map[string]string{NodeArgsAnnotation: annotation}}}
			servers := k3s.Servers([]corev1.Node{node})
			if len(servers) != 1 || servers[0].Scheduler != tc.want {
				t.Errorf("the installer reads %+v from node-args %s, want one server %q", servers, annotation, tc.want)
			}
		})
	}
	if NodeArgsAnnotation != k3s.NodeArgsAnnotation || LabelControlPlane != k3s.LabelControlPlane || LabelMaster != k3s.LabelMaster {
		t.Error("the lane and the installer name k3s's annotation or labels differently")
	}
}
