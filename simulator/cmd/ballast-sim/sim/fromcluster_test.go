package sim

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/ballast-sched/ballast/simulator/sim/record"

	"github.com/ballast-sched/ballast/cluster"
	"github.com/ballast-sched/ballast/simulator/scenario"
)

// TestFromCluster snapshots a real API server (no metrics-server, so pods
// use their requests), saves the scenario and simulates it.
func TestFromCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts three control planes; run without -short")
	}
	ctx := context.Background()
	c, err := cluster.Start(t, cluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []cluster.NodeSpec{{Name: "box-1", CPU: "2", Memory: "4Gi"}, {Name: "box-2", CPU: "2", Memory: "4Gi"}} {
		if _, err := c.AddNode(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	saved := filepath.Join(t.TempDir(), "snapshot.yaml")
	out, err := run(t, "--from-cluster", "--kubeconfig", c.KubeconfigPath(), "--save", saved, "--json", "--duration", "1m")
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenario.Load(saved)
	if err != nil {
		t.Fatalf("the saved snapshot does not load: %v", err)
	}
	if len(sc.Nodes) != 2 || sc.Nodes[0].Name != "box-1" || sc.Nodes[1].CPU.String() != "2" {
		t.Errorf("snapshot nodes = %+v", sc.Nodes)
	}
	var got record.Comparison
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("--json output does not decode: %v\n%.300s", err, out)
	}
	if got.Ballast == nil || len(got.Ballast.Summary.Final) != 2 || len(got.Ballast.Steps) != 5 {
		t.Errorf("the simulation of the snapshot did not report both nodes over 5 steps (0s–1m every 15s): %+v", got.Ballast)
	}
}
