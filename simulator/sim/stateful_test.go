package sim

import (
	"context"
	"testing"
	"time"

	"github.com/ballast-sched/ballast/simulator/scenario"
	"github.com/ballast-sched/ballast/simulator/sim/record"
)

// statefulAndJobs: a database whose volume lives on pi-1, the node a hog
// makes hot, where it is the largest pod; Home Assistant's volume on pi-2,
// which reboots for seven minutes; a cache's on pi-3, which loses power
// for good; a CronJob every two minutes, a Job from 1m, and web pods the
// descheduler may move.
const statefulAndJobs = `
name: stateful-and-jobs
duration: 12m
step: 15s
seed: 5
nodes:
- {name: pi-1, cpu: "4", memory: 8Gi, arch: arm64, background: {cpu: 200m, memory: 600Mi}}
- {name: pi-2, cpu: "4", memory: 8Gi, arch: arm64, background: {cpu: 200m, memory: 600Mi}}
- {name: pi-3, cpu: "4", memory: 8Gi, arch: arm64, background: {cpu: 200m, memory: 600Mi}}
- {name: mini, cpu: "8", memory: 16Gi, background: {cpu: 300m, memory: 1Gi}}
workloads:
- name: db
  kind: StatefulSet
  replicas: 1
  volumeNodes: [pi-1]
  requests: {cpu: 100m, memory: 256Mi}
  usage: {cpu: {type: constant, value: 900m}, memory: {type: constant, value: 2Gi}}
- name: ha
  kind: StatefulSet
  replicas: 1
  volumeNodes: [pi-2]
  requests: {cpu: 100m, memory: 256Mi}
  usage: {cpu: {type: constant, value: 200m}, memory: {type: constant, value: 512Mi}}
- name: cache
  kind: StatefulSet
  replicas: 1
  volumeNodes: [pi-3]
  requests: {cpu: 50m, memory: 128Mi}
  usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 256Mi}}
- name: web
  replicas: 6
  requests: {cpu: 100m, memory: 128Mi}
  usage: {cpu: {type: noisy, value: 400m, stddev: 40m}, memory: {type: constant, value: 300Mi}}
- name: backup
  kind: CronJob
  schedule: "*/2 * * * *"
  runFor: 1m
  requests: {cpu: 100m, memory: 128Mi}
  usage: {cpu: {type: constant, value: 800m}, memory: {type: constant, value: 256Mi}}
- name: scan
  kind: Job
  start: 1m
  runFor: 3m
  requests: {cpu: 100m, memory: 128Mi}
  usage: {cpu: {type: constant, value: 600m}, memory: {type: constant, value: 256Mi}}
events:
- {at: 1m, type: hog, node: pi-1, resources: {cpu: "2500m"}, for: 10m}
- {at: 2m, type: reboot, node: pi-2, for: 7m}
- {at: 3m, type: power-loss, node: pi-3}
`

// A StatefulSet's pod stays on its volume's node whatever the load there,
// comes back to it after a reboot and waits, Pending, for one lost for
// good; the runs of Jobs and CronJobs start when due, end when their time
// is over, and are never moved.
func TestStatefulSetsAndJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two control planes; run without -short")
	}
	sc, err := scenario.Parse([]byte(statefulAndJobs))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compare(context.Background(), sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A run's pods are there from the step it is due to the step before
	// its time is over.
	running := func(w string, at time.Duration) bool {
		switch w {
		case "scan":
			return at >= time.Minute && at < 4*time.Minute
		case "backup":
			return at >= 2*time.Minute && at%(2*time.Minute) < time.Minute
		}
		return false
	}
	for mode, r := range map[string]*record.Result{"default": c.Default, "ballast": c.Ballast} {
		final := map[string]map[string]int{}
		for _, n := range r.Summary.Final {
			final[n.Node] = n.Workloads
		}
		if final["pi-1"]["db"] != 1 || final["pi-2"]["ha"] != 1 {
			t.Errorf("%s: at the end db on pi-1 %d, ha on pi-2 %d; want each on its volume's node", mode, final["pi-1"]["db"], final["pi-2"]["ha"])
		}
		if r.Summary.Pending != 1 || r.Summary.WaitingForVolume != 1 {
			t.Errorf("%s: %d pods pending at the end, %d waiting for their volume's node; want the cache's alone", mode, r.Summary.Pending, r.Summary.WaitingForVolume)
		}
		for _, m := range r.Moves {
			if m.Workload != "web" {
				t.Errorf("%s: moved a pod of %s off %s", mode, m.Workload, m.From)
			}
		}
		if r.UnmovableMoves != 0 {
			t.Errorf("%s: %d moves of pods nothing may move", mode, r.UnmovableMoves)
		}
		for _, st := range r.Steps {
			for _, w := range []string{"scan", "backup"} {
				n := 0
				for _, node := range st.Nodes {
					n += node.Workloads[w]
				}
				if want := running(w, st.At); (n == 1) != want || n > 1 {
					t.Errorf("%s: at %s %d pods of %s, want running %t", mode, st.At, n, w, want)
				}
			}
		}
	}
	if c.Ballast.Evictions == 0 {
		t.Error("the descheduler moved nothing off the hogged pi-1: the checks above prove nothing about it")
	}
}
