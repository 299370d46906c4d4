package scenario

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

func TestBuiltinScenariosParse(t *testing.T) {
	want := []string{"daemonsets-and-a-join", "flapping-hog", "fleet-50", "gaming-pc", "hog-on-biggest", "homelab-mixed", "leaky-cache", "memory-hog", "mixed-arch", "new-node",
		"pi-reboots", "request-skew", "scale-out", "server-maintenance", "stateful-homelab", "vm-on-mini", "waves-and-scaling"}
	if diff := cmp.Diff(want, BuiltinNames()); diff != "" {
		t.Fatalf("BuiltinNames() mismatch (-want,+got):\n%s", diff)
	}
	for _, name := range want {
		s, err := Builtin(name)
		if err != nil {
			t.Errorf("Builtin(%q): %v", name, err)
			continue
		}
		if s.Name != name {
			t.Errorf("scenario file %s.yaml is named %q", name, s.Name)
		}
		if s.Target == nil {
			t.Errorf("shipped scenario %s has no target", name)
		}
	}
	if _, err := Builtin("nope"); err == nil || !strings.Contains(err.Error(), "homelab-mixed") {
		t.Errorf("Builtin(nope) = %v, want an error listing the scenarios", err)
	}
}

func TestParseFillsDefaults(t *testing.T) {
	s, err := Parse([]byte(`
name: tiny
duration: 5m
nodes: [{name: n1, cpu: "2", memory: 2Gi}]
workloads:
- name: app
  replicas: 1
  usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 64Mi}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Step.Duration != 15*time.Second || s.Seed != 1 {
		t.Errorf("step %v seed %d, want 15s and 1", s.Step.Duration, s.Seed)
	}
	if n := s.Nodes[0]; n.Pods != 110 || n.Arch != "amd64" {
		t.Errorf("node pods %d arch %q, want 110 and amd64", n.Pods, n.Arch)
	}
	if s.Target != nil {
		t.Errorf("target %+v, want none", s.Target)
	}
	if w := s.Workloads[0]; w.Namespace != "default" || w.Kind != Deployment {
		t.Errorf("namespace %q kind %q, want default and Deployment", w.Namespace, w.Kind)
	}
	if got := s.Nodes[0].Memory; got.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("memory %s, want 2Gi", got.String())
	}
}

func TestParseRejectsBadScenarios(t *testing.T) {
	const base = `
name: bad
duration: 10m
nodes:
- {name: n1, cpu: "2", memory: 2Gi}
- {name: late, cpu: "2", memory: 2Gi, absent: true}
workloads:
- name: app
  replicas: 1
  usage: {cpu: {type: constant, value: 100m}, memory: {type: constant, value: 64Mi}}
`
	tests := []struct {
		name string
		yaml string
		want field.ErrorList
	}{
		{
			name: "unknown field",
			yaml: base + "colour: blue\n",
		},
		{
			name: "no nodes, bad duration",
			yaml: "name: x\nduration: 0s\nworkloads: []\n",
			want: field.ErrorList{
				field.Invalid(field.NewPath("duration"), nil, ""),
				field.Invalid(field.NewPath("step"), nil, ""),
				field.Required(field.NewPath("nodes"), ""),
			},
		},
		{
			name: "node with zero cpu and a duplicate name",
			yaml: strings.Replace(base, `{name: late, cpu: "2"`, `{name: n1, cpu: "0"`, 1),
			want: field.ErrorList{
				field.Duplicate(field.NewPath("nodes").Index(1).Child("name"), nil),
				field.Invalid(field.NewPath("nodes").Index(1).Child("cpu"), nil, ""),
			},
		},
		{
			name: "unknown profile type and limit below request",
			yaml: base + `- name: b
  replicas: 1
  requests: {cpu: 500m}
  limits: {cpu: 100m}
  usage: {cpu: {type: sawtooth}, memory: {type: ramp, from: 1Mi, to: 2Mi}}
`,
			want: field.ErrorList{
				field.Invalid(field.NewPath("workloads").Index(1).Child("limits", "cpu"), nil, ""),
				field.NotSupported(field.NewPath("workloads").Index(1).Child("usage", "cpu", "type"), nil, []string(nil)),
				field.Invalid(field.NewPath("workloads").Index(1).Child("usage", "memory", "over"), nil, ""),
			},
		},
		{
			name: "events that reference nothing or happen too late",
			yaml: base + `events:
- {at: 1m, type: join, node: n1}
- {at: 2m, type: scale, workload: ghost, replicas: 3}
- {at: 20m, type: cordon, node: late}
- {at: 3m, type: hog, node: n1}
- {at: 4m, type: explode, node: n1}
`,
			want: field.ErrorList{
				field.Invalid(field.NewPath("events").Index(0).Child("node"), nil, ""),
				field.NotFound(field.NewPath("events").Index(1).Child("workload"), nil),
				field.Invalid(field.NewPath("events").Index(2).Child("at"), nil, ""),
				field.Required(field.NewPath("events").Index(3).Child("resources"), ""),
				field.NotSupported(field.NewPath("events").Index(4).Child("type"), nil, []string(nil)),
			},
		},
		{
			name: "a DaemonSet with replicas and scaled, an unknown kind, a reboot without end, an outage of no node",
			yaml: base + `- name: agent
  kind: DaemonSet
  replicas: 2
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
- name: db
  kind: ReplicationController
  replicas: 1
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
events:
- {at: 1m, type: scale, workload: agent, replicas: 3}
- {at: 2m, type: reboot, node: n1}
- {at: 3m, type: power-loss, node: ghost}
`,
			want: field.ErrorList{
				field.Invalid(field.NewPath("workloads").Index(1).Child("replicas"), nil, ""),
				field.NotSupported(field.NewPath("workloads").Index(2).Child("kind"), nil, []string(nil)),
				field.Invalid(field.NewPath("events").Index(0).Child("workload"), nil, ""),
				field.Invalid(field.NewPath("events").Index(1).Child("for"), nil, ""),
				field.NotFound(field.NewPath("events").Index(2).Child("node"), nil),
			},
		},
		{
			name: "Jobs and CronJobs with replicas, without a run time, scaled, or with a schedule missing or unreadable",
			yaml: base + `- name: scan
  kind: Job
  replicas: 2
  start: 11m
  schedule: "@hourly"
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
- name: backup
  kind: CronJob
  runFor: 3m
  parallelism: -1
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
- name: nightly
  kind: CronJob
  schedule: "61 * * * *"
  concurrencyPolicy: Sometimes
  runFor: 3m
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
- name: zoned
  kind: CronJob
  schedule: "CRON_TZ=Europe/Paris 0 3 * * *"
  start: 1m
  runFor: 3m
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
- name: a-cronjob-whose-name-is-too-long-for-its-jobs-to-be-named
  kind: CronJob
  schedule: "*/5 * * * *"
  runFor: 1m
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
events:
- {at: 1m, type: scale, workload: scan, replicas: 3}
- {at: 2m, type: scale, workload: backup, replicas: 3}
`,
			want: field.ErrorList{
				field.Invalid(field.NewPath("workloads").Index(1).Child("replicas"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(1).Child("runFor"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(1).Child("start"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(1).Child("schedule"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(2).Child("parallelism"), nil, ""),
				field.Required(field.NewPath("workloads").Index(2).Child("schedule"), ""),
				field.Invalid(field.NewPath("workloads").Index(3).Child("schedule"), nil, ""),
				field.NotSupported(field.NewPath("workloads").Index(3).Child("concurrencyPolicy"), nil, []string(nil)),
				field.Invalid(field.NewPath("workloads").Index(4).Child("start"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(4).Child("schedule"), nil, ""),
				field.TooLong(field.NewPath("workloads").Index(5).Child("name"), nil, 0),
				field.Invalid(field.NewPath("events").Index(0).Child("workload"), nil, ""),
				field.Invalid(field.NewPath("events").Index(1).Child("workload"), nil, ""),
			},
		},
		{
			name: "volumes on nodes there are not, or of a workload that has none; a Deployment with a run time",
			yaml: base + `- name: db
  kind: StatefulSet
  replicas: 2
  volumeNodes: [n1, ghost]
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
- name: web
  replicas: 2
  volumeNodes: [n1]
  parallelism: 2
  runFor: 1m
  usage: {cpu: {type: constant, value: 10m}, memory: {type: constant, value: 16Mi}}
events:
- {at: 1m, type: scale, workload: db, replicas: 3}
`,
			want: field.ErrorList{
				field.NotFound(field.NewPath("workloads").Index(1).Child("volumeNodes").Index(1), nil),
				field.Invalid(field.NewPath("workloads").Index(2).Child("volumeNodes"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(2).Child("parallelism"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(2).Child("runFor"), nil, ""),
			},
		},
		{
			name: "amounts Kubernetes cannot count, hogs that end before they start or past Go's durations",
			yaml: strings.Replace(strings.Replace(base, `cpu: "2", memory: 2Gi}`, `cpu: 8Ei, memory: 1e19}`, 1), "value: 64Mi", "value: 1e400", 1) + `events:
- {at: 1m, type: hog, node: n1, resources: {cpu: "1"}, for: -1m}
- {at: 2m, type: hog, node: n1, resources: {cpu: "1"}, for: 2562047h46m}
- {at: 3m, type: hog, node: n1, resources: {cpu: "1"}, for: 2562000h}
`,
			want: field.ErrorList{
				field.Invalid(field.NewPath("nodes").Index(0).Child("cpu"), nil, ""),
				field.Invalid(field.NewPath("nodes").Index(0).Child("memory"), nil, ""),
				field.Invalid(field.NewPath("workloads").Index(0).Child("usage", "memory", "value"), nil, ""),
				field.Invalid(field.NewPath("events").Index(0).Child("for"), nil, ""),
				field.Invalid(field.NewPath("events").Index(1).Child("for"), nil, ""),
			},
		},
		{
			name: "target out of range",
			yaml: base + "target: {spreadRatio: -1, spreadOverOracle: -3, maxEvictions: -2, hotCycles: -1}\n",
			want: field.ErrorList{
				field.Invalid(field.NewPath("target", "spreadRatio"), nil, ""),
				field.Invalid(field.NewPath("target", "spreadOverOracle"), nil, ""),
				field.Invalid(field.NewPath("target", "maxEvictions"), nil, ""),
				field.Invalid(field.NewPath("target", "hotCycles"), nil, ""),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatal("Parse succeeded, want an error")
			}
			if tt.want == nil {
				return // a decoding error, not a validation one
			}
			var s Scenario
			if decodeErr := yaml.UnmarshalStrict([]byte(tt.yaml), &s); decodeErr != nil {
				t.Fatalf("decoding: %v", decodeErr)
			}
			SetDefaults(&s)
			got := validationErrors(&s)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(field.Error{}, "BadValue", "Detail")); diff != "" {
				t.Errorf("validation errors mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}

// What Save writes, Load reads back as the same scenario.
func TestSaveThenLoad(t *testing.T) {
	sc, err := Random(3, RandomOptions{MinNodes: 4, MaxNodes: 4})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "random-3.yaml")
	if err := Save(path, sc); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := yaml.Marshal(sc)
	got, _ := yaml.Marshal(back)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("loaded back another scenario (-saved,+loaded):\n%s", diff)
	}
}
