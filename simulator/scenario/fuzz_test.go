package scenario

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"
)

// FuzzParse reads arbitrary bytes as a scenario file, which users write by
// hand: nothing may panic, a refusal says why, and a scenario Parse accepts
// validates again, has what the simulator reads of it (below), and reads
// back the same once written out, as ballast-sim saves the scenarios it
// takes from a cluster.
func FuzzParse(f *testing.F) {
	for _, name := range BuiltinNames() {
		data, err := builtinFS.ReadFile("builtin/" + name + ".yaml")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	const tiny = "name: tiny\nduration: 5m\nnodes: [{name: n1, cpu: \"2\", memory: 2Gi}]\nworkloads:\n" +
		"- name: app\n  replicas: 1\n  usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 64Mi}}\n"
	f.Add([]byte(tiny))
	// Quantities beyond what Kubernetes counts in an int64, and beyond
	// float64.
	f.Add([]byte(strings.Replace(tiny, `cpu: "2"`, `cpu: 8Ei`, 1)))
	f.Add([]byte(strings.Replace(tiny, `memory: 2Gi`, `memory: 1e19`, 1)))
	f.Add([]byte(strings.Replace(tiny, `value: 64Mi`, `value: 1e400`, 1)))
	f.Add([]byte(strings.Replace(tiny, `{type: constant, value: 100m}`, `{type: wave, value: 1, amplitude: 1e309, period: 1m}`, 1)))
	// Hogs that would end before they start.
	f.Add([]byte(tiny + "events:\n- {at: 1m, type: hog, node: n1, resources: {memory: 1Gi}, for: -1m}\n"))
	f.Add([]byte(tiny + "events:\n- {at: 2m, type: hog, node: n1, resources: {cpu: \"1\"}, for: 2562047h46m}\n"))
	f.Add([]byte(tiny + "target: {spreadRatio: .nan, spreadOverOracle: .inf, hotCycles: 0, growing: [app]}\n"))
	f.Add([]byte("name: x\nduration: 2562047h47m16.854775807s\nstep: 1ns\nnodes: [{name: n, cpu: 1n, memory: \"1\"}]\nworkloads: []\n"))
	// Schedules the cron parser must refuse, not choke on; a StatefulSet's
	// volumes on a node there is not; a Job scaled.
	for _, schedule := range []string{"*/0 * * * *", "TZ=UTC 0 3 * * *", "@every -1s", "0-", "1-0/0 * * * *", "@yearly", ""} {
		f.Add([]byte(tiny + "- {name: backup, kind: CronJob, schedule: \"" + schedule + "\", runFor: 1m, usage: {cpu: {type: constant, value: 1m}, memory: {type: constant, value: 1Mi}}}\n"))
	}
	f.Add([]byte(tiny + "- {name: db, kind: StatefulSet, replicas: 2, volumeNodes: [n1, n9], usage: {cpu: {type: constant, value: 1m}, memory: {type: constant, value: 1Mi}}}\n"))
	f.Add([]byte(tiny + "- {name: scan, kind: Job, start: 1m, runFor: 2562047h, usage: {cpu: {type: constant, value: 1m}, memory: {type: constant, value: 1Mi}}}\n" +
		"events:\n- {at: 2m, type: scale, workload: scan, replicas: 2}\n"))
	f.Add([]byte("{}"))
	f.Add([]byte("name: [\n"))
	f.Add([]byte("\xff\xfe"))

	quantity := cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if s != nil {
				t.Fatalf("scenario %+v with error %v", s, err)
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("a refusal that says nothing")
			}
			return
		}
		if err := Validate(s); err != nil {
			t.Fatalf("accepted, then invalid: %v", err)
		}
		runnable(t, s)
		out, err := yaml.Marshal(s)
		if err != nil {
			t.Fatalf("an accepted scenario does not encode: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("an accepted scenario, written out, is refused: %v\n%s", err, out)
		}
		if diff := cmp.Diff(s, back, quantity); diff != "" {
			t.Fatalf("an accepted scenario changed once written out and read (-read,+read again):\n%s", diff)
		}
	})
}

// runnable fails t unless s has what the simulator reads of it: at least a
// step in its duration, a node at the start, the defaults filled, a node's
// allocatable as Kubernetes counts it (millicores, bytes in an int64)
// positive, requests and limits not negative, hogs that end no sooner than
// they start, and usage that is a number, never negative, whenever sampled.
func runnable(t *testing.T, s *Scenario) {
	t.Helper()
	if s.Step.Duration <= 0 || s.Step.Duration > s.Duration.Duration || s.Seed == 0 {
		t.Fatalf("step %v, duration %v, seed %d", s.Step.Duration, s.Duration.Duration, s.Seed)
	}
	present := false
	for _, n := range s.Nodes {
		present = present || !n.Absent
		if n.Pods <= 0 || n.Arch == "" {
			t.Fatalf("node %s: pods %d, arch %q", n.Name, n.Pods, n.Arch)
		}
		if n.CPU.MilliValue() <= 0 || n.Memory.Value() <= 0 {
			t.Fatalf("node %s: cpu %s counted as %dm, memory %s as %d", n.Name, n.CPU.String(), n.CPU.MilliValue(), n.Memory.String(), n.Memory.Value())
		}
		amount(t, "node "+n.Name+" background cpu", n.Background.CPU.AsApproximateFloat64())
		amount(t, "node "+n.Name+" background memory", n.Background.Memory.AsApproximateFloat64())
	}
	if !present {
		t.Fatal("no node at the start")
	}
	times := []time.Duration{0, s.Step.Duration, s.Duration.Duration / 2, s.Duration.Duration}
	for _, w := range s.Workloads {
		if w.Namespace == "" {
			t.Fatalf("workload %s without a namespace", w.Name)
		}
		for _, q := range []resource.Quantity{w.Requests.CPU, w.Requests.Memory, w.Limits.CPU, w.Limits.Memory} {
			if q.MilliValue() < 0 || q.Value() < 0 {
				t.Fatalf("workload %s: request or limit %s counted as %dm", w.Name, q.String(), q.MilliValue())
			}
		}
		for _, at := range times {
			for _, noise := range []float64{-3, 0, 3} {
				amount(t, "workload "+w.Name+" cpu", w.Usage.CPU.Amount(at, noise))
				amount(t, "workload "+w.Name+" memory", w.Usage.Memory.Amount(at, noise))
			}
		}
	}
	for i, e := range s.Events {
		if e.At.Duration < 0 || e.At.Duration > s.Duration.Duration {
			t.Fatalf("event %d at %v, outside the scenario", i, e.At.Duration)
		}
		if e.Type == Hog {
			if e.For.Duration < 0 || e.At.Duration+e.For.Duration < e.At.Duration {
				t.Fatalf("hog %d from %v for %v ends before it starts", i, e.At.Duration, e.For.Duration)
			}
			amount(t, "hog cpu", e.Resources.CPU.AsApproximateFloat64())
			amount(t, "hog memory", e.Resources.Memory.AsApproximateFloat64())
		}
	}
	if s.Target != nil && s.Target.HotCycles < 1 {
		t.Fatalf("target with hotCycles %d", s.Target.HotCycles)
	}
}

// amount fails t unless v is a usage: a finite number, not negative.
func amount(t *testing.T, what string, v float64) {
	t.Helper()
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		t.Fatalf("%s: %v", what, v)
	}
}
