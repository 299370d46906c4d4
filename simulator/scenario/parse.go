package scenario

import (
	"fmt"
	"math"
	"os"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"
)

// Defaults for fields a scenario leaves out.
const (
	DefaultStep      = 15 * time.Second
	DefaultSeed      = 1
	DefaultNamespace = "default"
	DefaultPods      = 110
	DefaultArch      = "amd64"
)

var (
	profileTypes = sets.New(Constant, Ramp, Spike, Noisy, Wave)
	eventTypes   = sets.New(Join, Cordon, Uncordon, Hog, Scale, RestartDescheduler, Reboot, PowerLoss, Drain)
)

// Load reads and parses a scenario file.
func Load(path string) (*Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading scenario: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	return s, nil
}

// Save writes s to path as YAML, what Load reads back.
func Save(path string, s *Scenario) error {
	data, err := yaml.Marshal(s)
	if err != nil {
		return fmt.Errorf("encoding scenario %s: %w", s.Name, err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("writing scenario: %w", err)
	}
	return nil
}

// Parse decodes a scenario, rejecting unknown fields, fills defaults and
// validates it.
func Parse(data []byte) (*Scenario, error) {
	var s Scenario
	if err := yaml.UnmarshalStrict(data, &s); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	SetDefaults(&s)
	if err := Validate(&s); err != nil {
		return nil, err
	}
	return &s, nil
}

// SetDefaults fills the fields a scenario may leave out.
func SetDefaults(s *Scenario) {
	if s.Step.Duration == 0 {
		s.Step.Duration = DefaultStep
	}
	if s.Seed == 0 {
		s.Seed = DefaultSeed
	}
	for i := range s.Nodes {
		if s.Nodes[i].Pods == 0 {
			s.Nodes[i].Pods = DefaultPods
		}
		if s.Nodes[i].Arch == "" {
			s.Nodes[i].Arch = DefaultArch
		}
	}
	for i := range s.Workloads {
		if s.Workloads[i].Namespace == "" {
			s.Workloads[i].Namespace = DefaultNamespace
		}
		w := &s.Workloads[i]
		if w.Kind == "" {
			w.Kind = Deployment
		}
		if w.RunsToCompletion() && w.Parallelism == 0 {
			w.Parallelism = 1
		}
		if w.Kind == CronJob && w.ConcurrencyPolicy == "" {
			w.ConcurrencyPolicy = AllowConcurrent
		}
	}
	if s.Target != nil && s.Target.HotCycles == 0 {
		s.Target.HotCycles = DefaultHotCycles
	}
}

// DefaultHotCycles is how many descheduling cycles a node may stay over a
// scheduler threshold when a scenario's target does not say.
const DefaultHotCycles = 3

// Validate checks a defaulted scenario and reports every problem with its
// field path.
func Validate(s *Scenario) error {
	return validationErrors(s).ToAggregate()
}

func validationErrors(s *Scenario) field.ErrorList {
	var errs field.ErrorList
	if s.Name == "" {
		errs = append(errs, field.Required(field.NewPath("name"), ""))
	}
	if s.Duration.Duration <= 0 {
		errs = append(errs, field.Invalid(field.NewPath("duration"), s.Duration.Duration.String(), "must be positive"))
	}
	if s.Step.Duration <= 0 || s.Step.Duration > s.Duration.Duration {
		errs = append(errs, field.Invalid(field.NewPath("step"), s.Step.Duration.String(), "must be positive and at most the duration"))
	}
	nodes, nodeErrs := validateNodes(field.NewPath("nodes"), s.Nodes)
	errs = append(errs, nodeErrs...)
	workloads, workloadErrs := validateWorkloads(field.NewPath("workloads"), s.Workloads, s.Duration.Duration, nodes)
	errs = append(errs, workloadErrs...)
	unscalable := map[string]WorkloadKind{}
	for _, w := range s.Workloads {
		if !w.Scalable() {
			unscalable[w.Name] = w.Kind
		}
	}
	errs = append(errs, validateEvents(field.NewPath("events"), s.Events, s.Duration.Duration, nodes, workloads, unscalable)...)
	errs = append(errs, validateTarget(field.NewPath("target"), s.Target, workloads)...)
	return errs
}

func validateTarget(path *field.Path, t *Target, workloads sets.Set[string]) field.ErrorList {
	var errs field.ErrorList
	if t == nil {
		return nil
	}
	if t.SpreadRatio < 0 {
		errs = append(errs, field.Invalid(path.Child("spreadRatio"), t.SpreadRatio, "must not be negative"))
	}
	if t.SpreadOverOracle < 0 {
		errs = append(errs, field.Invalid(path.Child("spreadOverOracle"), t.SpreadOverOracle, "must not be negative"))
	}
	if t.MaxEvictions != nil && *t.MaxEvictions < 0 {
		errs = append(errs, field.Invalid(path.Child("maxEvictions"), *t.MaxEvictions, "must not be negative"))
	}
	if t.HotCycles < 1 {
		errs = append(errs, field.Invalid(path.Child("hotCycles"), t.HotCycles, "must be at least 1"))
	}
	for i, w := range t.Growing {
		if !workloads.Has(w) {
			errs = append(errs, field.NotFound(path.Child("growing").Index(i), w))
		}
	}
	return errs
}

func validateNodes(path *field.Path, nodes []Node) (map[string]Node, field.ErrorList) {
	var errs field.ErrorList
	byName := map[string]Node{}
	present := 0
	if len(nodes) == 0 {
		errs = append(errs, field.Required(path, "a scenario needs at least one node"))
	}
	for i, n := range nodes {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Subdomain(n.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), n.Name, msg))
		}
		if _, dup := byName[n.Name]; dup {
			errs = append(errs, field.Duplicate(p.Child("name"), n.Name))
		}
		byName[n.Name] = n
		errs = append(errs, positive(p.Child("cpu"), n.CPU)...)
		errs = append(errs, positive(p.Child("memory"), n.Memory)...)
		if n.Pods < 0 {
			errs = append(errs, field.Invalid(p.Child("pods"), n.Pods, "must not be negative"))
		}
		errs = append(errs, nonNegative(p.Child("background", "cpu"), n.Background.CPU)...)
		errs = append(errs, nonNegative(p.Child("background", "memory"), n.Background.Memory)...)
		if !n.Absent {
			present++
		}
	}
	if len(nodes) > 0 && present == 0 {
		errs = append(errs, field.Invalid(path, len(nodes), "at least one node must be present at the start (absent: false)"))
	}
	return byName, errs
}

func validateWorkloads(path *field.Path, workloads []Workload, duration time.Duration, nodes map[string]Node) (sets.Set[string], field.ErrorList) {
	var errs field.ErrorList
	names := sets.New[string]()
	for i, w := range workloads {
		p := path.Index(i)
		for _, msg := range validation.IsDNS1123Label(w.Name) {
			errs = append(errs, field.Invalid(p.Child("name"), w.Name, msg))
		}
		for _, msg := range validation.IsDNS1123Label(w.Namespace) {
			errs = append(errs, field.Invalid(p.Child("namespace"), w.Namespace, msg))
		}
		if names.Has(w.Name) {
			errs = append(errs, field.Duplicate(p.Child("name"), w.Name))
		}
		names.Insert(w.Name)
		if w.Replicas < 0 {
			errs = append(errs, field.Invalid(p.Child("replicas"), w.Replicas, "must not be negative"))
		}
		errs = append(errs, validateKind(p, w, duration, nodes)...)
		errs = append(errs, nonNegative(p.Child("requests", "cpu"), w.Requests.CPU)...)
		errs = append(errs, nonNegative(p.Child("requests", "memory"), w.Requests.Memory)...)
		errs = append(errs, limitAtLeastRequest(p.Child("limits", "cpu"), w.Limits.CPU, w.Requests.CPU)...)
		errs = append(errs, limitAtLeastRequest(p.Child("limits", "memory"), w.Limits.Memory, w.Requests.Memory)...)
		errs = append(errs, validateProfile(p.Child("usage", "cpu"), w.Usage.CPU)...)
		errs = append(errs, validateProfile(p.Child("usage", "memory"), w.Usage.Memory)...)
	}
	return names, errs
}

// maxCronJobName is the longest name Kubernetes takes for a CronJob: its
// Jobs are named after it with eleven characters more.
const maxCronJobName = 52

// validateKind checks what a workload's kind asks of it and refuses what
// its kind has no use for, naming the field.
func validateKind(p *field.Path, w Workload, duration time.Duration, nodes map[string]Node) field.ErrorList {
	var errs field.ErrorList
	switch w.Kind {
	case Deployment, DaemonSet, StatefulSet, Job, CronJob:
	default:
		return append(errs, field.NotSupported(p.Child("kind"), w.Kind, WorkloadKinds))
	}
	if w.Kind == DaemonSet && w.Replicas != 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), w.Replicas, "a DaemonSet runs one pod on every node its nodeSelector matches: leave replicas out"))
	}
	if w.RunsToCompletion() && w.Replicas != 0 {
		errs = append(errs, field.Invalid(p.Child("replicas"), w.Replicas, fmt.Sprintf("a %s's run starts parallelism pods, each running once: leave replicas out", w.Kind)))
	}
	if w.IsStatefulSet() {
		for i, n := range w.VolumeNodes {
			if _, ok := nodes[n]; !ok {
				errs = append(errs, field.NotFound(p.Child("volumeNodes").Index(i), n))
			}
		}
	} else if len(w.VolumeNodes) > 0 {
		errs = append(errs, field.Invalid(p.Child("volumeNodes"), w.VolumeNodes, "only a StatefulSet's volumes live on a node"))
	}
	if !w.RunsToCompletion() {
		why := fmt.Sprintf("a %s's pods do not end by themselves: only a Job or CronJob has one", w.Kind)
		if w.Parallelism != 0 {
			errs = append(errs, field.Invalid(p.Child("parallelism"), w.Parallelism, why))
		}
		if w.RunFor.Duration != 0 {
			errs = append(errs, field.Invalid(p.Child("runFor"), w.RunFor.Duration.String(), why))
		}
	} else {
		if w.Parallelism < 1 {
			errs = append(errs, field.Invalid(p.Child("parallelism"), w.Parallelism, "must be at least 1"))
		}
		if w.RunFor.Duration <= 0 {
			errs = append(errs, field.Invalid(p.Child("runFor"), w.RunFor.Duration.String(), "how long each pod runs once started: must be positive"))
		}
	}
	if w.Kind == Job {
		if w.Start.Duration < 0 || w.Start.Duration > duration {
			errs = append(errs, field.Invalid(p.Child("start"), w.Start.Duration.String(), "must be within the scenario's duration"))
		}
	} else if w.Start.Duration != 0 {
		errs = append(errs, field.Invalid(p.Child("start"), w.Start.Duration.String(), "only a Job starts later; a CronJob starts on its schedule"))
	}
	if w.Kind != CronJob {
		if w.Schedule != "" || w.ConcurrencyPolicy != "" {
			errs = append(errs, field.Invalid(p.Child("schedule"), w.Schedule, "only a CronJob has a schedule and a concurrencyPolicy"))
		}
		return errs
	}
	if len(w.Name) > maxCronJobName {
		errs = append(errs, field.TooLong(p.Child("name"), w.Name, maxCronJobName))
	}
	if w.Schedule == "" {
		errs = append(errs, field.Required(p.Child("schedule"), "when each run starts, in cron syntax (\"*/10 * * * *\")"))
	} else if _, err := ParseSchedule(w.Schedule); err != nil {
		errs = append(errs, field.Invalid(p.Child("schedule"), w.Schedule, err.Error()))
	}
	switch w.ConcurrencyPolicy {
	case AllowConcurrent, ForbidConcurrent, ReplaceConcurrent:
	default:
		errs = append(errs, field.NotSupported(p.Child("concurrencyPolicy"), w.ConcurrencyPolicy,
			[]ConcurrencyPolicy{AllowConcurrent, ForbidConcurrent, ReplaceConcurrent}))
	}
	return errs
}

func validateProfile(path *field.Path, pr Profile) field.ErrorList {
	var errs field.ErrorList
	if !profileTypes.Has(pr.Type) {
		return append(errs, field.NotSupported(path.Child("type"), pr.Type, sets.List(profileTypes)))
	}
	errs = append(errs, nonNegative(path.Child("value"), pr.Value)...)
	switch pr.Type {
	case Ramp:
		errs = append(errs, nonNegative(path.Child("from"), pr.From)...)
		errs = append(errs, nonNegative(path.Child("to"), pr.To)...)
		if pr.Over.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child("over"), pr.Over.Duration.String(), "a ramp needs a positive duration"))
		}
	case Spike:
		errs = append(errs, nonNegative(path.Child("peak"), pr.Peak)...)
		if pr.For.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child("for"), pr.For.Duration.String(), "a spike needs a positive duration"))
		}
	case Noisy:
		errs = append(errs, nonNegative(path.Child("stddev"), pr.Stddev)...)
	case Wave:
		errs = append(errs, nonNegative(path.Child("amplitude"), pr.Amplitude)...)
		if pr.Period.Duration <= 0 {
			errs = append(errs, field.Invalid(path.Child("period"), pr.Period.Duration.String(), "a wave needs a positive period"))
		}
	}
	if pr.Start.Duration < 0 || pr.At.Duration < 0 {
		errs = append(errs, field.Invalid(path, pr.Type, "start and at must not be negative"))
	}
	return errs
}

func validateEvents(path *field.Path, events []Event, duration time.Duration, nodes map[string]Node, workloads sets.Set[string], unscalable map[string]WorkloadKind) field.ErrorList {
	var errs field.ErrorList
	joined := sets.New[string]()
	for i, e := range events {
		p := path.Index(i)
		if e.At.Duration < 0 || e.At.Duration > duration {
			errs = append(errs, field.Invalid(p.Child("at"), e.At.Duration.String(), "must be within the scenario's duration"))
		}
		if !eventTypes.Has(e.Type) {
			errs = append(errs, field.NotSupported(p.Child("type"), e.Type, sets.List(eventTypes)))
			continue
		}
		if e.Type == RestartDescheduler {
			continue
		}
		if e.Type == Scale {
			if !workloads.Has(e.Workload) {
				errs = append(errs, field.NotFound(p.Child("workload"), e.Workload))
			}
			switch unscalable[e.Workload] {
			case DaemonSet:
				errs = append(errs, field.Invalid(p.Child("workload"), e.Workload, "a DaemonSet is not scaled: it runs a pod on every node its nodeSelector matches"))
			case Job, CronJob:
				errs = append(errs, field.Invalid(p.Child("workload"), e.Workload, fmt.Sprintf("a %s is not scaled: each run starts its parallelism", unscalable[e.Workload])))
			}
			if e.Replicas < 0 {
				errs = append(errs, field.Invalid(p.Child("replicas"), e.Replicas, "must not be negative"))
			}
			continue
		}
		node, ok := nodes[e.Node]
		if !ok {
			errs = append(errs, field.NotFound(p.Child("node"), e.Node))
			continue
		}
		switch e.Type {
		case Join:
			if !node.Absent {
				errs = append(errs, field.Invalid(p.Child("node"), e.Node, "only a node declared absent can join"))
			}
			if joined.Has(e.Node) {
				errs = append(errs, field.Duplicate(p.Child("node"), e.Node))
			}
			joined.Insert(e.Node)
		case Reboot:
			if e.For.Duration <= 0 || e.At.Duration > math.MaxInt64-e.For.Duration {
				errs = append(errs, field.Invalid(p.Child("for"), e.For.Duration.String(), "how long the node stays down: positive, and at + for a duration Go can hold"))
			}
		case Hog:
			if e.Resources.CPU.Sign() <= 0 && e.Resources.Memory.Sign() <= 0 {
				errs = append(errs, field.Required(p.Child("resources"), "a hog uses some cpu or memory"))
			}
			errs = append(errs, nonNegative(p.Child("resources", "cpu"), e.Resources.CPU)...)
			errs = append(errs, nonNegative(p.Child("resources", "memory"), e.Resources.Memory)...)
			// The hog ends at at+for: neither before it starts, nor past
			// the largest time Go counts.
			if e.For.Duration < 0 || e.At.Duration > math.MaxInt64-e.For.Duration {
				errs = append(errs, field.Invalid(p.Child("for"), e.For.Duration.String(), "must not be negative (zero: until the end), nor end past 2562047h"))
			}
		}
	}
	return errs
}

// maxQuantity is the largest amount a scenario may give: Kubernetes counts
// CPU in thousandths of a core in an int64 (a node's allocatable, a pod's
// requests), and a larger amount wraps around to a negative one, or to
// zero, there, and overflows float64 in the usage model; memory is bound
// alike, at some 9 PB.
var maxQuantity = *resource.NewMilliQuantity(math.MaxInt64, resource.DecimalSI)

func positive(path *field.Path, q resource.Quantity) field.ErrorList {
	if q.Sign() <= 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must be positive")}
	}
	return notTooLarge(path, q)
}

func nonNegative(path *field.Path, q resource.Quantity) field.ErrorList {
	if q.Sign() < 0 {
		return field.ErrorList{field.Invalid(path, q.String(), "must not be negative")}
	}
	return notTooLarge(path, q)
}

func notTooLarge(path *field.Path, q resource.Quantity) field.ErrorList {
	if q.Cmp(maxQuantity) > 0 {
		return field.ErrorList{field.Invalid(path, q.String(), fmt.Sprintf("must be at most %s (Kubernetes counts thousandths in an int64)", maxQuantity.String()))}
	}
	return nil
}

func limitAtLeastRequest(path *field.Path, limit, request resource.Quantity) field.ErrorList {
	errs := nonNegative(path, limit)
	if !limit.IsZero() && limit.Cmp(request) < 0 {
		errs = append(errs, field.Invalid(path, limit.String(), fmt.Sprintf("must be at least the request (%s)", request.String())))
	}
	return errs
}
