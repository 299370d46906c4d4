package balance_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance"
	"github.com/ballast-sched/ballast/descheduler/pkg/plugins/balance/balancetest"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/usage"
)

func TestInFlight(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := balance.NewStore()
	s.Remember(balance.Workload{}, "", "a", "b", t0, balance.NodeLoad{usage.Memory: 10}, balance.NodeLoad{usage.Memory: 20})
	tests := []struct {
		name    string
		node    string
		sampled time.Time
		want    balance.NodeLoad
	}{
		// missing = 1 − (ts − t0)/5m
		{name: "source, sample before the move", node: "a", sampled: t0.Add(-time.Minute), want: balance.NodeLoad{usage.Memory: -10}},
		{name: "source, 2m into the window", node: "a", sampled: t0.Add(2 * time.Minute), want: balance.NodeLoad{usage.Memory: -6}},
		{name: "destination, 1m into the window", node: "b", sampled: t0.Add(time.Minute), want: balance.NodeLoad{usage.Memory: 16}},
		{name: "window rolled past the move", node: "a", sampled: t0.Add(6 * time.Minute), want: balance.NodeLoad{usage.Memory: 0}},
		{name: "unrelated node", node: "c", sampled: t0, want: balance.NodeLoad{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := s.InFlight(tc.node, tc.sampled, 5*time.Minute, nil)
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("inFlight (-want,+got):\n%s", diff)
			}
		})
	}
}

// Memory read on the newest sample: the source's sample shows none of the
// move while the pod is listed there (terminating or not), and all of it
// from when the pod was gone: the move's time plus the pod's grace period
// (30 s here), or the first cycle that no longer listed a pod still listed
// after that. The destination keeps the window's fraction, and CPU, read on
// the mean, too.
func TestInFlightOnTheNewestSample(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	stats := loadmodel.Statistics{usage.CPU: loadmodel.Average, usage.Memory: loadmodel.Latest}
	s := balance.NewStore()
	s.Remember(balance.Workload{}, "uid-p", "a", "b", t0, balance.NodeLoad{usage.CPU: 10, usage.Memory: 10},
		balance.NodeLoad{usage.CPU: 20, usage.Memory: 20})
	listed := map[string][]*v1.Pod{"a": {balancetest.Pod("p", "a", "rs", 40, func(p *v1.Pod) { p.UID = "uid-p" })}}
	podsOn := func(node string) []*v1.Pod { return listed[node] }
	inFlight := func(node string, sampled time.Time) balance.NodeLoad {
		return s.InFlight(node, sampled, 5*time.Minute, stats)
	}
	approx := cmpopts.EquateApprox(0, 1e-9)

	// Twenty seconds on, the pod is still terminating on a.
	s.NoteGone(t0.Add(20*time.Second), podsOn)
	if diff := cmp.Diff(balance.NodeLoad{usage.CPU: -10 * (1 - 1.0/15), usage.Memory: -10}, inFlight("a", t0.Add(20*time.Second)), approx); diff != "" {
		t.Errorf("source with its pod still listed (-want,+got):\n%s", diff)
	}
	// At forty seconds a cycle finds it gone: it was gone by the end of
	// its grace period, 30 s after the move.
	listed["a"] = nil
	s.NoteGone(t0.Add(40*time.Second), podsOn)
	if got := inFlight("a", t0.Add(25*time.Second))[usage.Memory]; got != -10 {
		t.Errorf("source, memory sampled within the pod's grace period: %v, want -10", got)
	}
	later := t0.Add(55 * time.Second)
	if diff := cmp.Diff(balance.NodeLoad{usage.CPU: -10 * (1 - 55.0/300)}, inFlight("a", later), approx); diff != "" {
		t.Errorf("source sampled after the pod was gone (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(balance.NodeLoad{usage.CPU: 20 * (1 - 55.0/300), usage.Memory: 20 * (1 - 55.0/300)}, inFlight("b", later), approx); diff != "" {
		t.Errorf("destination (-want,+got):\n%s", diff)
	}
	// A pod listed again later (a stale informer) does not undo it.
	listed["a"] = []*v1.Pod{balancetest.Pod("p", "a", "rs", 40, func(p *v1.Pod) { p.UID = "uid-p" })}
	s.NoteGone(later, podsOn)
	if got := inFlight("a", later)[usage.Memory]; got != 0 {
		t.Errorf("source after the pod was found gone once: %v, want 0", got)
	}

	// A pod found gone in the cycle that moved it: a sample taken at that
	// very time (a simulated clock's) predates the move.
	s.Remember(balance.Workload{}, "uid-s", "e", "b", t0, balance.NodeLoad{usage.Memory: 10}, balance.NodeLoad{usage.Memory: 20})
	s.NoteGone(t0, podsOn)
	if got := inFlight("e", t0)[usage.Memory]; got != -10 {
		t.Errorf("source sampled at the move's time, the pod found gone then: %v, want -10", got)
	}

	// Five minutes between cycles: the next one finds the pod gone, and a
	// sample of 4m45s shows it so.
	s.Remember(balance.Workload{}, "uid-q", "c", "b", t0, balance.NodeLoad{usage.Memory: 10}, balance.NodeLoad{usage.Memory: 20})
	s.NoteGone(t0.Add(5*time.Minute), podsOn)
	if got := inFlight("c", t0.Add(4*time.Minute+45*time.Second))[usage.Memory]; got != 0 {
		t.Errorf("source a cycle of five minutes later found the pod gone off: %v, want 0", got)
	}
	// A pod still listed after its grace period (a rollout's, deleted once
	// its replacement is Ready) was gone at some moment up to the first
	// cycle that no longer lists it.
	s.Remember(balance.Workload{}, "uid-r", "d", "b", t0, balance.NodeLoad{usage.Memory: 10}, balance.NodeLoad{usage.Memory: 20})
	listed["d"] = []*v1.Pod{balancetest.Pod("r", "d", "rs", 40, func(p *v1.Pod) { p.UID = "uid-r" })}
	s.NoteGone(t0.Add(time.Minute), podsOn)
	listed["d"] = nil
	s.NoteGone(t0.Add(80*time.Second), podsOn)
	if got := inFlight("d", t0.Add(75*time.Second))[usage.Memory]; got != -10 {
		t.Errorf("source of a pod listed a minute after its move, sampled before a cycle found it gone: %v, want -10", got)
	}
	if got := inFlight("d", t0.Add(85*time.Second))[usage.Memory]; got != 0 {
		t.Errorf("source of a pod listed a minute after its move, sampled after a cycle found it gone: %v, want 0", got)
	}
}

func TestBalanceMovesGrowWithTheWorkload(t *testing.T) {
	for _, tc := range []struct{ replicas, want int }{
		{replicas: 0, want: 1}, {replicas: 1, want: 1}, {replicas: 3, want: 1}, {replicas: 7, want: 1},
		{replicas: 8, want: 2}, {replicas: 70, want: 17},
	} {
		if got := balance.BalanceMoves(tc.replicas); got != tc.want {
			t.Errorf("BalanceMoves(%d) = %d, want %d", tc.replicas, got, tc.want)
		}
	}
}

func TestCooldownAndExpiry(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	s := balance.NewStore()
	s.Remember(w, "", "a", "b", t0, nil, nil)
	for _, tc := range []struct {
		name     string
		w        balance.Workload
		node     string
		since    time.Time
		now      time.Time
		cooldown time.Duration
		want     bool
	}{
		{name: "same cycle does not count", w: w, node: "b", now: t0, cooldown: time.Hour, want: false},
		{name: "within cooldown", w: w, node: "b", now: t0.Add(9 * time.Minute), cooldown: 10 * time.Minute, want: true},
		{name: "after cooldown", w: w, node: "b", now: t0.Add(10 * time.Minute), cooldown: 10 * time.Minute, want: false},
		// The source stays a source: a hot node may need several cycles.
		{name: "the source", w: w, node: "a", now: t0.Add(time.Minute), cooldown: time.Hour, want: false},
		{name: "other workload", w: balance.Workload{Namespace: "default", Kind: "Deployment", Name: "db"}, node: "b", now: t0.Add(time.Minute), cooldown: time.Hour, want: false},
		// The nodes changed after the move: it was for another cluster.
		{name: "made before the nodes changed", w: w, node: "b", since: t0.Add(time.Minute), now: t0.Add(9 * time.Minute), cooldown: 10 * time.Minute, want: false},
		{name: "made as the nodes changed", w: w, node: "b", since: t0, now: t0.Add(9 * time.Minute), cooldown: 10 * time.Minute, want: true},
	} {
		if got := s.MovedOnto(tc.w, tc.node, tc.since, tc.now, tc.cooldown); got != tc.want {
			t.Errorf("%s: MovedOnto = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name string
		w    balance.Workload
		node string
		now  time.Time
		want int
	}{
		// Two nodes shedding in one cycle share the workload's budget.
		{name: "same cycle counts", w: w, node: "b", now: t0, want: 1},
		{name: "off another node, within cooldown", w: w, node: "b", now: t0.Add(9 * time.Minute), want: 1},
		{name: "off another node, after cooldown", w: w, node: "b", now: t0.Add(10 * time.Minute), want: 0},
		{name: "off a third node", w: w, node: "c", now: t0.Add(time.Minute), want: 1},
		// Moving off the same node again finishes the move.
		{name: "off the same node", w: w, node: "a", now: t0.Add(time.Minute), want: 0},
		{name: "other workload", w: balance.Workload{Namespace: "default", Kind: "Deployment", Name: "db"}, node: "b", now: t0.Add(time.Minute), want: 0},
	} {
		if got := s.MovesElsewhere(tc.w, tc.node, tc.now, 10*time.Minute); got != tc.want {
			t.Errorf("%s: MovesElsewhere = %d, want %d", tc.name, got, tc.want)
		}
	}
	// Every move counts: a second one off another node makes two.
	more := balance.NewStore()
	more.Remember(w, "", "a", "b", t0, nil, nil)
	more.Remember(w, "", "c", "b", t0.Add(5*time.Minute), nil, nil)
	if got := more.MovesElsewhere(w, "d", t0.Add(6*time.Minute), time.Hour); got != 2 {
		t.Errorf("two moves off a and c: MovesElsewhere from d = %d, want 2", got)
	}
	if got := more.MovesElsewhere(w, "c", t0.Add(6*time.Minute), time.Hour); got != 1 {
		t.Errorf("two moves off a and c: MovesElsewhere from c = %d, want 1", got)
	}
	// A pull spends no balance move: it is paced per cycle (MovesNow), and
	// it makes its destination a node that pulls.
	more.RememberPull(w, "", "e", "f", t0.Add(10*time.Minute), nil, nil)
	if got := more.MovesElsewhere(w, "d", t0.Add(10*time.Minute), time.Hour); got != 2 {
		t.Errorf("a pull off e: MovesElsewhere from d = %d, want 2 (the pull not counted)", got)
	}
	if got := more.MovesNow(w, t0.Add(10*time.Minute)); got != 1 {
		t.Errorf("MovesNow after one pull at that time = %d, want 1", got)
	}
	if got := more.MovesNow(w, t0.Add(15*time.Minute)); got != 0 {
		t.Errorf("MovesNow in a later cycle = %d, want 0", got)
	}
	for _, q := range []struct {
		node string
		at   time.Duration
		want bool
	}{{"f", 15 * time.Minute, true}, {"f", 10 * time.Minute, false}, {"f", 21 * time.Minute, false}, {"b", 15 * time.Minute, false}} {
		if got := more.Pulling(q.node, t0.Add(q.at), 10*time.Minute); got != q.want {
			t.Errorf("Pulling(%s) at %v = %v, want %v", q.node, q.at, got, q.want)
		}
	}
	s.Expire(t0.Add(11*time.Minute), 10*time.Minute)
	if n := len(s.Destinations()); n != 0 {
		t.Errorf("expire kept %d moves older than 10m", n)
	}

	// Two plugins share a store and remember for 1h and 10m: the shorter
	// memory does not forget what the longer one still needs.
	shared := balance.NewStore()
	shared.Remember(w, "", "a", "b", t0, nil, nil)
	shared.Expire(t0.Add(time.Minute), time.Hour)
	shared.Expire(t0.Add(20*time.Minute), 10*time.Minute)
	if !shared.MovedOnto(w, "b", time.Time{}, t0.Add(20*time.Minute), time.Hour) {
		t.Error("a 10m Expire forgot a move the 1h plugin still guards")
	}
	shared.Expire(t0.Add(time.Hour), 10*time.Minute)
	if n := len(shared.Destinations()); n != 0 {
		t.Errorf("expire kept %d moves older than the longest memory", n)
	}
}

// A replacement that lands back on its source is a bounce (Bounced), not a
// move onto the source: the source stays a source for MovedOnto.
func TestABounceIsNotAMoveOntoTheSource(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	back := balancetest.Pod("web-back", "a", "web", 40)
	back.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
	s := balance.NewStore()
	s.Lock()
	defer s.Unlock()
	s.Remember(w, "", "a", "b", t0, nil, nil)
	if n := s.Follow([]string{"a", "b"}, func(node string) []*v1.Pod {
		if node == "a" {
			return []*v1.Pod{back}
		}
		return nil
	}); n.Back["a"] != 1 {
		t.Fatalf("ping-pong = %v, want 1 on a", n.Back)
	}
	now := t0.Add(20 * time.Minute)
	if s.MovedOnto(w, "a", time.Time{}, now, time.Hour) {
		t.Error("MovedOnto(a) = true for the move's own source")
	}
	if !s.Bounced(w, "a", now, time.Hour) {
		t.Error("Bounced(a) = false after its replacement landed back")
	}
}

// A move made through the exported Remember is one the other checks see:
// MovedOff at once, Bounced only after a replacement landed back.
func TestSharedMemory(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := balance.NewStore()
	s.Lock()
	defer s.Unlock()
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	s.Remember(w, "", "a", "b", t0, balance.NodeLoad{"memory": 4}, balance.NodeLoad{"memory": 4})
	later := t0.Add(time.Minute)
	if !s.MovedOff(w, "a", later, 10*time.Minute) || s.MovedOff(w, "b", later, 10*time.Minute) {
		t.Error("MovedOff should hold for the source only")
	}
	if s.MovedOff(w, "a", t0.Add(10*time.Minute), 10*time.Minute) {
		t.Error("MovedOff after the cooldown")
	}
	if s.Bounced(w, "a", later, 10*time.Minute) {
		t.Error("Bounced before any replacement was seen")
	}
	// 4 % of memory is still expected on b right after the move.
	if got := s.InFlight("b", t0, 5*time.Minute, nil)["memory"]; got != 4 {
		t.Errorf("in flight on b = %v, want 4", got)
	}
	back := balancetest.Pod("web-back", "a", "web", 40)
	back.CreationTimestamp = metav1.NewTime(later)
	if n := s.Follow([]string{"a", "b"}, func(node string) []*v1.Pod {
		if node == "a" {
			return []*v1.Pod{back}
		}
		return nil
	}); n.Back["a"] != 1 {
		t.Fatalf("landed back on a = %d, want 1", n.Back["a"])
	}
	if !s.Bounced(w, "a", later, 10*time.Minute) {
		t.Error("Bounced is false after a replacement landed back")
	}
}

// A replacement that runs elsewhere than the move expected guards the node
// it runs on; each move takes one replacement, the oldest created after it.
func TestFollowGuardsWhereReplacementsLand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	created := func(name, node string, at time.Time) *v1.Pod {
		p := balancetest.Pod(name, node, "web", 40)
		p.CreationTimestamp = metav1.NewTime(at)
		return p
	}
	pods := map[string][]*v1.Pod{
		// Older than both moves: not a replacement.
		"c": {created("web-old", "c", t0.Add(-time.Hour))},
		// The first move's replacement (created first after it), on c, not b.
		"d": {created("web-r2", "d", t0.Add(3*time.Minute))},
	}
	pods["c"] = append(pods["c"], created("web-r1", "c", t0.Add(time.Minute)))
	podsOn := func(node string) []*v1.Pod { return pods[node] }

	s := balance.NewStore()
	s.Lock()
	defer s.Unlock()
	s.Remember(w, "", "a", "b", t0, nil, balance.NodeLoad{"memory": 4})
	s.Remember(w, "", "a", "b", t0.Add(2*time.Minute), nil, balance.NodeLoad{"memory": 4})
	if n := s.Follow([]string{"a", "b", "c", "d"}, podsOn); len(n.Back) != 0 || n.AsPlanned != 0 || n.Elsewhere != 2 {
		t.Errorf("followed %+v, want no ping-pong and both replacements elsewhere than b", n)
	}
	now := t0.Add(5 * time.Minute)
	for _, tc := range []struct {
		node string
		want bool
	}{
		{node: "b", want: true}, // expected destination: still guarded
		{node: "c", want: true}, // the first move's replacement runs here
		{node: "d", want: true}, // the second move's runs here
		{node: "a", want: false},
	} {
		if got := s.MovedOnto(w, tc.node, time.Time{}, now, 10*time.Minute); got != tc.want {
			t.Errorf("MovedOnto(%s) = %v, want %v", tc.node, got, tc.want)
		}
	}
	// Both replacements landed elsewhere: b expects nothing any more.
	if got := s.InFlight("b", now, 5*time.Minute, nil); len(got) != 0 {
		t.Errorf("in flight on b = %v, want nothing", got)
	}
	// Following again takes no pod twice, counts no landing twice and
	// keeps what it learnt.
	if n := s.Follow([]string{"a", "b", "c", "d"}, podsOn); n.AsPlanned+n.Elsewhere != 0 {
		t.Errorf("a second Follow counted landings again: %+v", n)
	}
	if !s.MovedOnto(w, "c", time.Time{}, now, 10*time.Minute) || !s.MovedOnto(w, "d", time.Time{}, now, 10*time.Minute) {
		t.Error("a second Follow lost where the replacements landed")
	}
}

// A move made to cool a node answered its heat: once that node would be
// cool even with the moved pod back, the heat has gone and moving the
// workload again, or back, is a new decision the loop guards no longer
// block. A node cool only because the pod left is not enough, and a
// balancing move keeps its cooldown whatever the nodes do.
func TestAMoveWhoseHeatWentNoLongerGuards(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hot := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "ingest"}
	even := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "api"}
	s := balance.NewStore()
	share := balance.NodeLoad{usage.CPU: 20, usage.Memory: 5}
	s.RememberCooling(hot, "i-1", "nuc-1", "nuc-2", t0, share, share)
	s.Remember(even, "a-1", "nuc-1", "pi-1", t0, share, share)
	now := t0.Add(5 * time.Minute)
	low := balance.ResourceThresholds{usage.CPU: 50, usage.Memory: 60}
	at := func(cpu float64) map[string]balance.NodeLoad {
		return map[string]balance.NodeLoad{"nuc-1": {usage.CPU: cpu, usage.Memory: 20}}
	}

	for _, tc := range []struct {
		name  string
		cpu   float64
		freed bool
	}{
		{name: "source still hot", cpu: 88},
		// 40 + the pod's 20 = 60: over the low 50, cool only because it left.
		{name: "source cool only without the pod", cpu: 40},
		// 20 + 20 = 40: cool with the pod back, the heat has gone.
		{name: "source cool even with the pod back", cpu: 20, freed: true},
	} {
		s.SetCool(at(tc.cpu), low, nil)
		if got := s.MovedOff(hot, "nuc-1", now, time.Hour); got == tc.freed {
			t.Errorf("%s: MovedOff = %v, want %v", tc.name, got, !tc.freed)
		}
		if got := s.MovesElsewhere(hot, "nuc-2", now, time.Hour) > 0; got == tc.freed {
			t.Errorf("%s: MovesElsewhere counts the cooling move = %v, want %v", tc.name, got, !tc.freed)
		}
		if !s.MovedOff(even, "nuc-1", now, time.Hour) || s.MovesElsewhere(even, "pi-1", now, time.Hour) != 1 {
			t.Errorf("%s: a balancing move lost its cooldown", tc.name)
		}
	}
	if !s.MovedOnto(hot, "nuc-2", time.Time{}, now, time.Hour) {
		t.Error("MovedOnto forgot the cooling move")
	}
}

// A move found room on its destination; then something else heated that
// node (a process outside Kubernetes). Once the node is over a high
// threshold while the rest of it grew since the move by more than the pod
// brought, the move was overtaken: the workload may leave the node again,
// back to where it came from too. A node hot because of the moved pod
// keeps both guards: undoing that move would be a loop.
func TestAMoveOvertakenByHeatNoLongerGuards(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	other := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "api"}
	share := balance.NodeLoad{usage.CPU: 5, usage.Memory: 10}
	low := balance.ResourceThresholds{usage.CPU: 50, usage.Memory: 50}
	high := balance.ResourceThresholds{usage.CPU: 80, usage.Memory: 85}
	now := t0.Add(5 * time.Minute)
	for _, tc := range []struct {
		name string
		// atMove is pi's memory when the pod was moved there; -1: not
		// known (a move kept by an older version).
		atMove, memory float64
		high           balance.ResourceThresholds
		overtaken      bool
	}{
		{name: "destination under its high thresholds", atMove: 20, memory: 60, high: high},
		// 90 − the pod's 10 = 80, up 60 from 20: a hog came after.
		{name: "destination heated by something else", atMove: 20, memory: 90, high: high, overtaken: true},
		// 90 − 10 = 80, up 6 from 74: no more than the pod's own 10, which
		// may be the pod using more than expected.
		{name: "destination hot with the pod, little else changed", atMove: 74, memory: 90, high: high},
		// Not known at the move: 90 − 10 = 80, under 85 without the pod.
		{name: "unknown, hot only with the pod", atMove: -1, memory: 90, high: high},
		// 97 − 10 = 87: hot without the pod.
		{name: "unknown, hot even without the pod", atMove: -1, memory: 97, high: high, overtaken: true},
		{name: "no high thresholds known", atMove: 20, memory: 97},
	} {
		s := balance.NewStore()
		s.Remember(w, "w-1", "nuc", "pi", t0, share, share)
		if tc.atMove >= 0 {
			s.Note("w-1", "balance", balance.NodeLoad{usage.CPU: 30, usage.Memory: 40}, balance.NodeLoad{usage.CPU: 20, usage.Memory: tc.atMove})
		}
		s.Remember(other, "a-1", "nuc", "mini", t0, share, share)
		s.Note("a-1", "balance", balance.NodeLoad{usage.CPU: 30, usage.Memory: 40}, balance.NodeLoad{usage.CPU: 20, usage.Memory: 30})
		s.SetCool(map[string]balance.NodeLoad{
			"nuc":  {usage.CPU: 20, usage.Memory: 30},
			"pi":   {usage.CPU: 20, usage.Memory: tc.memory},
			"mini": {usage.CPU: 20, usage.Memory: 40},
		}, low, tc.high)
		if got := s.MovedOnto(w, "pi", time.Time{}, now, time.Hour); got == tc.overtaken {
			t.Errorf("%s: MovedOnto = %v, want %v", tc.name, got, !tc.overtaken)
		}
		if got := s.MovedOff(w, "nuc", now, time.Hour); got == tc.overtaken {
			t.Errorf("%s: MovedOff = %v, want %v", tc.name, got, !tc.overtaken)
		}
		// Another workload's move, to a node that stayed as it found it,
		// keeps its guards whatever happened on pi.
		if !s.MovedOnto(other, "mini", time.Time{}, now, time.Hour) || !s.MovedOff(other, "nuc", now, time.Hour) {
			t.Errorf("%s: a move to a node that did not heat lost its guards", tc.name)
		}
	}
}

// Pods Ballast moved onto a node since a move are its own doing, not a
// change of the cluster: three moved onto pi in one cycle take it over 85 %
// together, and none of the three moves is overtaken by the others. A rise
// of pi's own use beyond a pod's share still is.
func TestMovesOntoOneNodeDoNotOvertakeEachOther(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	share := balance.NodeLoad{usage.Memory: 5}
	low := balance.ResourceThresholds{usage.Memory: 50}
	high := balance.ResourceThresholds{usage.Memory: 85}
	for _, tc := range []struct {
		name      string
		memory    float64
		overtaken bool
	}{
		// 70 + 3 × 5 = 85, and 2 more of pi's own: 87.
		{name: "hot with the three pods, little else changed", memory: 87},
		// 70 + 15 + 8 of pi's own: more than a pod's 5.
		{name: "pi's own use grew beyond a pod's share", memory: 93, overtaken: true},
	} {
		s := balance.NewStore()
		for i, pod := range []types.UID{"web-1", "web-2", "web-3"} {
			s.Remember(w, pod, "nuc", "pi", t0, share, share)
			s.Note(pod, "cooling nuc", balance.NodeLoad{usage.Memory: 95}, balance.NodeLoad{usage.Memory: 70 + 5*float64(i)})
		}
		s.SetCool(map[string]balance.NodeLoad{"nuc": {usage.Memory: 80}, "pi": {usage.Memory: tc.memory}}, low, high)
		if got := s.MovedOnto(w, "pi", time.Time{}, t0.Add(5*time.Minute), time.Hour); got == tc.overtaken {
			t.Errorf("%s: MovedOnto = %v, want %v", tc.name, got, !tc.overtaken)
		}
	}
}

// A replacement that uses more than its move expected (its cache fills, its
// memory spikes) heats its node itself: that is the move's doing, and
// moving the workload off the node again would undo it with nothing else
// changed. Only heat beyond what the replacement is measured using
// overtakes the move.
func TestAReplacementsOwnGrowthDoesNotOvertakeItsMove(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	share := balance.NodeLoad{usage.CPU: 5, usage.Memory: 10}
	low := balance.ResourceThresholds{usage.CPU: 50, usage.Memory: 50}
	high := balance.ResourceThresholds{usage.CPU: 80, usage.Memory: 85}
	replacement := balancetest.Pod("web-new", "pi", "web", 40)
	replacement.UID = "web-new"
	replacement.CreationTimestamp = metav1.NewTime(t0.Add(time.Second))
	for _, tc := range []struct {
		name string
		// measured is the replacement's memory in percent of pi; -1 when
		// nothing measured it.
		measured  float64
		overtaken bool
	}{
		// 90 − 70 = 20, as at the move: the heat is the pod's own.
		{name: "the replacement grew to 70 %", measured: 70},
		// 90 − 10 = 80, up 60 from 20: something else heated pi.
		{name: "the replacement uses what was expected", measured: 8, overtaken: true},
		{name: "the replacement not measured", measured: -1, overtaken: true},
	} {
		s := balance.NewStore()
		s.Lock()
		s.Remember(w, "web-1", "nuc", "pi", t0, share, share)
		s.Note("web-1", "balance", balance.NodeLoad{usage.CPU: 30, usage.Memory: 40}, balance.NodeLoad{usage.CPU: 20, usage.Memory: 20})
		s.Follow([]string{"nuc", "pi"}, func(node string) []*v1.Pod {
			if node == "pi" {
				return []*v1.Pod{replacement}
			}
			return nil
		})
		var asked []string
		s.MeasureReplacements(func(node string, uid types.UID) (balance.NodeLoad, bool) {
			asked = append(asked, node+"/"+string(uid))
			if tc.measured < 0 {
				return nil, false
			}
			return balance.NodeLoad{usage.CPU: 5, usage.Memory: tc.measured}, true
		})
		if len(asked) != 1 || asked[0] != "pi/web-new" {
			t.Errorf("%s: measured %v, want the replacement on pi", tc.name, asked)
		}
		s.SetCool(map[string]balance.NodeLoad{"nuc": {usage.CPU: 20, usage.Memory: 30}, "pi": {usage.CPU: 20, usage.Memory: 90}}, low, high)
		now := t0.Add(10 * time.Minute)
		if got := s.MovedOnto(w, "pi", time.Time{}, now, time.Hour); got == tc.overtaken {
			t.Errorf("%s: MovedOnto = %v, want %v", tc.name, got, !tc.overtaken)
		}
		if got := s.MovedOff(w, "nuc", now, time.Hour); got == tc.overtaken {
			t.Errorf("%s: MovedOff = %v, want %v", tc.name, got, !tc.overtaken)
		}
		s.Unlock()
	}
}

// The API server stamps a pod's creation in whole seconds and a controller
// replaces an evicted pod within milliseconds: the replacement's stamp is
// most often before the move's own time, in the same second. It is still
// the replacement; the moved pod itself and a pod of an earlier second are
// not.
func TestFollowFindsAReplacementStampedInTheMovesSecond(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 7, 400_000_000, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	pod := func(name, node string, created time.Time) *v1.Pod {
		return webPod(name, node, created.Truncate(time.Second))
	}
	pods := map[string][]*v1.Pod{
		// The moved pod, created in the same second (a fast bounce of a
		// new pod), still terminating on a: never its own replacement.
		"a": {pod("web-moved", "a", at)},
		// A sibling from the second before the move: not a replacement.
		"c": {pod("web-older", "c", at.Add(-time.Second))},
		// The replacement, created 80 ms after the move.
		"b": {pod("web-new", "b", at.Add(80*time.Millisecond))},
	}
	s := balance.NewStore()
	s.Lock()
	defer s.Unlock()
	s.Remember(w, "web-moved", "a", "b", at, nil, balance.NodeLoad{"memory": 4})
	s.Follow([]string{"a", "b", "c"}, func(node string) []*v1.Pod { return pods[node] })
	if s.MovedOnto(w, "c", time.Time{}, at.Add(time.Minute), 10*time.Minute) {
		t.Error("the sibling on c, older than the move, was taken for its replacement")
	}
	data, err := balance.EncodeMovesForTest(s)
	if err != nil {
		t.Fatal(err)
	}
	moves, err := balance.DecodeMoves(data)
	if err != nil || len(moves) != 1 {
		t.Fatalf("moves %v (%v)", moves, err)
	}
	if moves[0].LandedOn != "b" {
		t.Errorf("replacement on %q, want b: the pod created 80 ms after the move, stamped in its second", moves[0].LandedOn)
	}
}

// The API server's clock and the descheduler's disagree by minutes (a Pi
// that booted without network time): creation stamps say nothing of which
// pod came after a move. The pods listed just before the move do: a pod not
// among them is the replacement, however it is stamped, and one among them
// is not, however late its stamp; after a restart too.
func TestFollowTellsTheReplacementByThePodsListedBeforeTheMove(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	pod := webPod
	for _, tc := range []struct {
		name string
		// skew is the API server's clock less the descheduler's.
		skew time.Duration
	}{
		{name: "API server's clock behind", skew: -20 * time.Minute},
		{name: "API server's clock ahead", skew: 20 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pods := map[string][]*v1.Pod{
				"a": {pod("web-moved", "a", at.Add(tc.skew-time.Hour))},
				// A sibling created a second before the move.
				"c": {pod("web-older", "c", at.Add(tc.skew-time.Second))},
				// The replacement, created 80 ms after the move.
				"b": {pod("web-new", "b", at.Add(tc.skew+80*time.Millisecond))},
			}
			before := balance.NewStore()
			before.Remember(w, "web-moved", "a", "b", at, nil, balance.NodeLoad{"memory": 4})
			before.Existed("web-moved", sets.New[types.UID]("web-moved", "web-older"))
			// The descheduler restarts before the replacement runs: what
			// it listed before the move is read back with the move.
			data, err := balance.EncodeMovesForTest(before)
			if err != nil {
				t.Fatal(err)
			}
			s := balance.NewStore()
			s.Lock()
			defer s.Unlock()
			if _, err := balance.MergeMovesForTest(s, data); err != nil {
				t.Fatal(err)
			}
			s.Follow([]string{"a", "b", "c"}, func(node string) []*v1.Pod { return pods[node] })
			if s.MovedOnto(w, "c", time.Time{}, at.Add(time.Minute), 10*time.Minute) {
				t.Error("the sibling on c, listed before the move, was taken for its replacement")
			}
			if !s.MovedOnto(w, "b", time.Time{}, at.Add(time.Minute), 10*time.Minute) || !s.Replaces("web-new") {
				t.Error("the pod on b, not listed before the move, was not taken for its replacement")
			}
		})
	}
}

// Two pods of one workload moved in one cycle, to b and to c: their
// replacements, stamped in one second, go to the moves that expected them
// where they run, in whatever order the informer lists them.
func TestFollowTakesTheReplacementWhereItsMoveExpectedIt(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 30, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	for _, order := range [][]string{{"b", "c"}, {"c", "b"}} {
		s := balance.NewStore()
		s.Remember(w, "web-1", "a", "c", at, nil, balance.NodeLoad{"memory": 4})
		s.Existed("web-1", sets.New[types.UID]("web-1", "web-2"))
		s.Remember(w, "web-2", "a", "b", at, nil, balance.NodeLoad{"memory": 4})
		s.Existed("web-2", sets.New[types.UID]("web-1", "web-2"))
		pods := map[string][]*v1.Pod{"b": {webPod("web-on-b", "b", at)}, "c": {webPod("web-on-c", "c", at)}}
		got := s.Follow(order, func(node string) []*v1.Pod { return pods[node] })
		if got.AsPlanned != 2 {
			t.Errorf("nodes listed %v: %d replacements taken as planned, want 2", order, got.AsPlanned)
		}
	}
}

// Follow counts each replacement once, when first seen running, against the
// destination its move planned.
func TestFollowCountsLandingsAgainstThePlan(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	for _, tc := range []struct {
		name string
		// landed is the node the replacement runs on; empty for none yet.
		landed                 string
		wantPlanned, wantElsew int
	}{
		{name: "on the planned destination", landed: "b", wantPlanned: 1},
		{name: "elsewhere", landed: "c", wantElsew: 1},
		{name: "back on the source", landed: "a", wantElsew: 1},
		{name: "not running yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := balance.NewStore()
			s.Lock()
			defer s.Unlock()
			s.Remember(w, "uid-web-1", "a", "b", t0, nil, nil)
			podsOn := func(node string) []*v1.Pod {
				if node != tc.landed {
					return nil
				}
				p := balancetest.Pod("web-2", node, "web", 40)
				p.CreationTimestamp = metav1.NewTime(t0.Add(time.Minute))
				return []*v1.Pod{p}
			}
			for round := range 2 {
				got := s.Follow([]string{"a", "b", "c"}, podsOn)
				want := [2]int{tc.wantPlanned, tc.wantElsew}
				if round == 1 {
					// Each replacement is counted once.
					want = [2]int{}
				}
				if g := [2]int{got.AsPlanned, got.Elsewhere}; g != want {
					t.Errorf("round %d: as planned, elsewhere = %v, want %v", round, g, want)
				}
			}
		})
	}
}

// Listed tells a move's replacement, and a scale's new pod, by when the
// descheduler first listed them, whatever their creation stamps say; the
// first call after a start only learns the pods.
func TestListedTellsArrivalsAndNewPods(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	web := balance.Workload{Namespace: "default", Kind: "ReplicaSet", Name: "web"}
	db := balance.Workload{Namespace: "default", Kind: "StatefulSet", Name: "db"}
	s := balance.NewStore()
	s.Lock()
	defer s.Unlock()
	on := func(w balance.Workload, node string) balance.ListedPod {
		return balance.ListedPod{Workload: w, Node: node}
	}
	l := s.Listed(map[types.UID]balance.ListedPod{"web-1": on(web, "a"), "db-0": on(db, "a")}, t0)
	if len(l.Arrived)+len(l.New) != 0 {
		t.Fatalf("the first listing after a start: %+v, want nothing new", l)
	}
	s.Remember(web, "web-1", "a", "b", t0.Add(time.Minute), nil, nil)
	at := t0.Add(2 * time.Minute)
	l = s.Listed(map[types.UID]balance.ListedPod{"web-2": on(web, "b"), "db-0": on(db, "a"), "db-1": on(db, "c")}, at)
	if got, ok := l.Arrived["web-2"]; !ok || !got.Equal(at) || len(l.Arrived) != 1 {
		t.Errorf("arrived %v, want web-2 at %v: it appeared after a move of its workload", l.Arrived, at)
	}
	if got, ok := l.New["db-1"]; !ok || !got.Equal(at) || len(l.New) != 1 {
		t.Errorf("new %v, want db-1 at %v", l.New, at)
	}
	// Listed again later, each keeps when it was first listed.
	l = s.Listed(map[types.UID]balance.ListedPod{"web-2": on(web, "b"), "db-0": on(db, "a"), "db-1": on(db, "c")}, at.Add(5*time.Minute))
	if !l.Arrived["web-2"].Equal(at) || !l.New["db-1"].Equal(at) {
		t.Errorf("a later listing: %+v", l)
	}
}

// Of a workload's new pods, the replacement of a move is the one on the node
// the move expected it on, whatever the pods' UIDs (random in every run):
// the same cluster, the same replacements.
func TestListedTakesTheReplacementWhereTheMoveExpectedIt(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	web := balance.Workload{Namespace: "default", Kind: "Deployment", Name: "web"}
	for _, uids := range [][2]types.UID{{"aaa", "zzz"}, {"zzz", "aaa"}} {
		onC, onB := uids[0], uids[1]
		s := balance.NewStore()
		s.Lock()
		s.Listed(map[types.UID]balance.ListedPod{"web-1": {Workload: web, Node: "a"}}, t0)
		s.Remember(web, "web-1", "a", "c", t0.Add(time.Minute), nil, nil)
		// The replacement on c, and a pod a scale added on b.
		l := s.Listed(map[types.UID]balance.ListedPod{onC: {Workload: web, Node: "c"}, onB: {Workload: web, Node: "b"}}, t0.Add(2*time.Minute))
		s.Unlock()
		if _, ok := l.Arrived[onC]; !ok || len(l.Arrived) != 1 {
			t.Errorf("UIDs %v: arrived %v, want only the pod on c, where the move expected it", uids, l.Arrived)
		}
		if _, ok := l.New[onB]; !ok {
			t.Errorf("UIDs %v: new %v, want the pod on b", uids, l.New)
		}
	}
}

// The shape is the set of nodes that take pods: a change is when it
// differs from the last cycle's, never on the first cycle of a process.
func TestObserveShape(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := balance.NewStore()
	steps := []struct {
		nodes []string
		want  time.Time
	}{
		{nodes: []string{"b", "a"}, want: time.Time{}},                  // first cycle: nothing known before it
		{nodes: []string{"a", "b"}, want: time.Time{}},                  // the same nodes, in another order
		{nodes: []string{"a", "b", "c"}, want: t0.Add(2 * time.Minute)}, // c joined
		{nodes: []string{"a", "b", "c"}, want: t0.Add(2 * time.Minute)}, // remembered
		{nodes: []string{"a", "c"}, want: t0.Add(4 * time.Minute)},      // b left or was cordoned
		{nodes: nil, want: t0.Add(5 * time.Minute)},                     // none takes pods
		{nodes: []string{"a", "c"}, want: t0.Add(6 * time.Minute)},      // back
	}
	for i, st := range steps {
		if got := s.ObserveShape(st.nodes, t0.Add(time.Duration(i)*time.Minute)); !got.Equal(st.want) {
			t.Errorf("cycle %d (%v): ObserveShape = %v, want %v", i, st.nodes, got, st.want)
		}
	}
}

// webPod is a pod of ReplicaSet web on node whose UID is its name, created
// at created.
func webPod(name, node string, created time.Time) *v1.Pod {
	p := balancetest.Pod(name, node, "web", 40)
	p.UID = types.UID(name)
	p.CreationTimestamp = metav1.NewTime(created)
	return p
}
