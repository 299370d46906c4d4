package sim

import (
	"context"
	"testing"

	"github.com/ballast-sched/ballast/simulator/scenario"
)

// scaledDownWhileANodeIsOff scales a workload down while a node holding
// some of its pods is off: the ReplicaSet controller deletes one there,
// and nothing confirms that deletion until the node is back, as in a
// cluster.
const scaledDownWhileANodeIsOff = `
name: scaled-down-while-a-node-is-off
duration: 9m
step: 15s
seed: 3
nodes:
- {name: pi-1, cpu: "4", memory: 8Gi}
- {name: pi-2, cpu: "4", memory: 8Gi}
workloads:
- name: web
  replicas: 6
  requests: {cpu: 100m, memory: 128Mi}
  usage:
    cpu: {type: constant, value: 200m}
    memory: {type: constant, value: 256Mi}
events:
- {at: 1m, type: reboot, node: pi-2, for: 4m}
- {at: 2m, type: scale, workload: web, replicas: 2}
`

// A pod deleted while its node is off holds the simulation up no more than
// it would a cluster: the run goes on, and once the node is back the
// workload has the pods it should.
func TestScaleDownWhileANodeIsOff(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a control plane; run without -short")
	}
	sc, err := scenario.Parse([]byte(scaledDownWhileANodeIsOff))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), sc, ModeDefault, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pods := 0
	for _, n := range r.Summary.Final {
		pods += n.Workloads["web"]
	}
	if pods != 2 || r.Summary.Pending != 0 {
		t.Errorf("at the end %d pods of web and %d pending; want 2 and none", pods, r.Summary.Pending)
	}
}
