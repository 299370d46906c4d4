package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ballast-sched/ballast/simulator/sim/model"
)

// Thresholds are the usage, in percent of allocatable, above which a node
// counts as hot: the scheduler's LoadAware filter thresholds in the
// configuration the run judges by. Zero is no threshold.
type Thresholds struct {
	CPU    float64 `json:"cpuPercent,omitempty"`
	Memory float64 `json:"memoryPercent,omitempty"`
}

// Over reports whether cpu or memory (percent) is over its threshold.
func (t Thresholds) Over(cpu, memory float64) bool {
	return t.CPU > 0 && cpu > t.CPU || t.Memory > 0 && memory > t.Memory
}

// String is the thresholds as a table label shows them.
func (t Thresholds) String() string {
	percent := func(v float64) string {
		if v <= 0 {
			return "none"
		}
		return strconv.FormatFloat(v, 'f', -1, 64) + "%"
	}
	return "cpu " + percent(t.CPU) + " / memory " + percent(t.Memory)
}

// Result is what happened in one run of a scenario.
type Result struct {
	Scenario string        `json:"scenario"`
	Mode     model.Mode    `json:"mode"`
	Step     time.Duration `json:"stepNanoseconds"`
	// Thresholds are the scheduler thresholds hot nodes are judged by.
	Thresholds Thresholds `json:"thresholds"`
	// Steps hold every node at every step.
	Steps []Step `json:"steps"`
	// Evictions counts pods the descheduler evicted.
	Evictions int `json:"evictions"`
	// PingPong counts evictions from a node that earlier received a moved
	// pod of the same workload: moves undone. Loops are those undone while
	// nothing changed in the cluster between the two (the descheduler
	// undoing its own move for nothing); ReMoves those after a change (a
	// process outside Kubernetes started or stopped, a node joined or was
	// cordoned, a workload was scaled), which may be justified.
	PingPong int `json:"pingPong"`
	Loops    int `json:"loops"`
	ReMoves  int `json:"reMoves"`
	// UnmovableMoves counts evictions of pods that nothing may move: a
	// DaemonSet's, a StatefulSet's (its volume keeps it on its node) or a
	// Job's (it ends by itself). Any is a bug.
	UnmovableMoves int `json:"unmovableMoves,omitempty"`
	// Moves are the evictions one by one, in the order they were made.
	Moves []Move `json:"moves,omitempty"`
	// HotCycles is the most descheduling cycles in a row that started with
	// one node over a scheduler threshold (Thresholds).
	HotCycles int `json:"hotCycles"`
	// HotEvictions counts LoadAwareBalance's evictions off nodes over its
	// high thresholds, and NeededEvictions the fewest that would have
	// brought those nodes under them, counted when each node became hot.
	// SpreadReplicas' moves and LoadAwareBalance's moves for balance around
	// the mean (deviationThresholds) count in Evictions only.
	HotEvictions    int `json:"hotEvictions"`
	NeededEvictions int `json:"neededEvictions"`
	// PlacedOnHog counts pods placed on a node while a process outside
	// Kubernetes was eating it, from one sample after the process started
	// (before that no scheduler can know).
	PlacedOnHog int `json:"placedOnHog"`
	// Landed counts the moves with a planned destination whose
	// replacement landed, and AsPlanned those that landed where planned.
	Landed    int `json:"landed,omitempty"`
	AsPlanned int `json:"asPlanned,omitempty"`
	// Growing holds the workloads whose pods the descheduler reported as
	// growing (a leak: not moved, warned about), with the fastest growth
	// reported, in MiB per minute.
	Growing map[string]float64 `json:"growing,omitempty"`
	Summary Summary            `json:"summary"`
}

// NoteGrowing records that a pod of workload was reported growing at rate
// MiB per minute.
func (r *Result) NoteGrowing(workload string, rate float64) {
	if r.Growing == nil {
		r.Growing = map[string]float64{}
	}
	r.Growing[workload] = max(r.Growing[workload], rate)
}

// Step is the cluster at one simulated time.
type Step struct {
	At      time.Duration `json:"atNanoseconds"`
	Pending int           `json:"pending"`
	Nodes   []NodeStep    `json:"nodes"`
}

// NodeStep is one node at one step. Percentages are of allocatable.
type NodeStep struct {
	Node     string `json:"node"`
	Cordoned bool   `json:"cordoned,omitempty"`
	// Down: the node is off (rebooting, without power); it counts in no
	// spread while it is.
	Down           bool           `json:"down,omitempty"`
	Pods           int            `json:"pods"`
	Workloads      map[string]int `json:"workloads,omitempty"`
	CPURequests    float64        `json:"cpuRequestsPercent"`
	MemoryRequests float64        `json:"memoryRequestsPercent"`
	CPU            float64        `json:"cpuPercent"`
	Memory         float64        `json:"memoryPercent"`
	// NoUsage is set when load-watcher had no fresh usage of a live node;
	// CPU and Memory are then zero.
	NoUsage bool `json:"noUsage,omitempty"`
}

// Utilisation is the node's real utilisation: the mean of its CPU and
// memory percentages, weighted alike as in the shipped scheduler profile.
func (n NodeStep) Utilisation() float64 { return (n.CPU + n.Memory) / 2 }

// Summary condenses a run. Utilisation figures are averaged per node over
// the last quarter of the run, once the stack has had time to act.
type Summary struct {
	// Spread is the highest node utilisation minus the lowest, in points.
	Spread float64 `json:"spread"`
	// CV is the coefficient of variation of node utilisation.
	CV float64 `json:"cv"`
	// Hottest is the node with the highest utilisation, and Hottest its value.
	Hottest            string  `json:"hottest"`
	HottestUtilisation float64 `json:"hottestUtilisation"`
	// OverThreshold counts nodes whose CPU or memory exceeded the
	// scheduler's thresholds at the end.
	OverThreshold int `json:"overThreshold"`
	// Pending is the number of pods not running at the end.
	Pending int `json:"pending"`
	// WaitingForVolume counts, of Pending, the StatefulSet pods waiting
	// for the node their volume lives on (down, cordoned or full): the
	// one node any scheduler may put them on, not a choice of Ballast's.
	WaitingForVolume int `json:"waitingForVolume,omitempty"`
	// Final is the last step's nodes.
	Final []NodeStep `json:"final"`
}

// AsPlannedShare is the share, in percent, of the moves with a planned
// destination whose replacement landed there, of those that landed; false
// when none did.
func (r *Result) AsPlannedShare() (float64, bool) {
	if r.Landed == 0 {
		return 0, false
	}
	return 100 * float64(r.AsPlanned) / float64(r.Landed), true
}

// Summarize fills the summary from the steps and counts the moves that
// landed as planned.
func (r *Result) Summarize() {
	r.Landed, r.AsPlanned = 0, 0
	for _, m := range r.Moves {
		if m.Planned != "" && m.To != "" {
			r.Landed++
			if m.To == m.Planned {
				r.AsPlanned++
			}
		}
	}
	if len(r.Steps) == 0 {
		return
	}
	tail := r.Steps[len(r.Steps)-max(len(r.Steps)/4, 1):]
	sum := map[string]float64{}
	for _, s := range tail {
		for _, n := range s.Nodes {
			if n.Down {
				// As before a node joins: nothing, and no place in
				// the spread unless it is up for part of the window.
				continue
			}
			sum[n.Node] += n.Utilisation()
		}
	}
	util := map[string]float64{}
	for node, v := range sum {
		util[node] = v / float64(len(tail))
	}
	last := r.Steps[len(r.Steps)-1]
	r.Summary = Summarize(util)
	r.Summary.Pending = last.Pending
	r.Summary.Final = last.Nodes
	for _, n := range last.Nodes {
		if r.Thresholds.Over(n.CPU, n.Memory) {
			r.Summary.OverThreshold++
		}
	}
}

// Summarize computes spread, coefficient of variation and the hottest node
// of per-node utilisation.
func Summarize(util map[string]float64) Summary {
	var s Summary
	if len(util) == 0 {
		return s
	}
	names := make([]string, 0, len(util))
	for n := range util {
		names = append(names, n)
	}
	sort.Strings(names)
	lo, mean := math.Inf(1), 0.0
	s.HottestUtilisation = math.Inf(-1)
	for _, n := range names {
		v := util[n]
		mean += v
		lo = min(lo, v)
		if v > s.HottestUtilisation {
			s.Hottest, s.HottestUtilisation = n, v
		}
	}
	mean /= float64(len(names))
	variance := 0.0
	for _, n := range names {
		variance += (util[n] - mean) * (util[n] - mean)
	}
	variance /= float64(len(names))
	s.Spread = s.HottestUtilisation - lo
	if mean > 0 {
		s.CV = math.Sqrt(variance) / mean
	}
	return s
}

// Digest names a result: the first 12 hexadecimal digits of the SHA-256 of
// its JSON. Two runs of one scenario, seed, configuration and binary give
// the same digest (a simulation leaves nothing to the machine's speed), so
// a digest that changes says the result changed.
func (r *Result) Digest() string {
	data, err := json.Marshal(r)
	if err != nil {
		// A Result is plain data; it always encodes.
		panic(fmt.Sprintf("encoding a result: %v", err))
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:12]
}

// FirstDifference describes the first step at which two results of one
// scenario differ, "none" when they do not.
func FirstDifference(a, b *Result) string {
	for i := range min(len(a.Steps), len(b.Steps)) {
		sa, sb := a.Steps[i], b.Steps[i]
		if reflect.DeepEqual(sa, sb) {
			continue
		}
		for j := range min(len(sa.Nodes), len(sb.Nodes)) {
			if !reflect.DeepEqual(sa.Nodes[j], sb.Nodes[j]) {
				return fmt.Sprintf("at %s, node %s: %+v then %+v", sa.At, sa.Nodes[j].Node, sa.Nodes[j], sb.Nodes[j])
			}
		}
		return fmt.Sprintf("at %s: %d pending then %d", sa.At, sa.Pending, sb.Pending)
	}
	if len(a.Steps) != len(b.Steps) {
		return fmt.Sprintf("%d steps then %d", len(a.Steps), len(b.Steps))
	}
	if reflect.DeepEqual(a, b) {
		return "none"
	}
	for i := range min(len(a.Moves), len(b.Moves)) {
		if ma, mb := a.Moves[i], b.Moves[i]; ma.At != mb.At || ma.Workload != mb.Workload || ma.From != mb.From || ma.To != mb.To ||
			ma.Planned != mb.Planned || ma.Why != mb.Why || ma.Undid != mb.Undid {
			return fmt.Sprintf("move %d: at %s %s off %s, planned %s, landed %s (%s) then at %s %s off %s, planned %s, landed %s (%s)", i,
				ma.At, ma.Workload, ma.From, ma.Planned, ma.To, ma.Why, mb.At, mb.Workload, mb.From, mb.Planned, mb.To, mb.Why)
		}
	}
	return fmt.Sprintf("the counts: %d evictions, %d loops, %d re-moves, %d on a hog then %d, %d, %d, %d",
		a.Evictions, a.Loops, a.ReMoves, a.PlacedOnHog, b.Evictions, b.Loops, b.ReMoves, b.PlacedOnHog)
}

// Move is one eviction of a run: the pod, the node it left, the node its
// replacement landed on, and whether it undid an earlier move.
type Move struct {
	// At is the scenario time of the descheduling cycle that made it.
	At time.Duration `json:"atNanoseconds"`
	// Pod is left out of the JSON: pod names end in random characters,
	// and a result's digest must not depend on them.
	Pod      string `json:"-"`
	Workload string `json:"workload"`
	From     string `json:"from"`
	// Planned is the node the descheduler planned the replacement on;
	// empty when it recorded none. To is the node the replacement landed
	// on; empty when none did.
	Planned string `json:"planned,omitempty"`
	To      string `json:"to,omitempty"`
	// Undid is MoveLoop or MoveReMove when the pod left a node that an
	// earlier move of its workload had sent a pod to.
	Undid string `json:"undid,omitempty"`
	// Why is what the descheduler said of the move (the BallastMoved
	// event's message): the usage and the limit it crossed, the expected
	// destination and both nodes' expected usage after.
	Why string `json:"why,omitempty"`
}

// Reason is Why without the "Moved off NODE by PLUGIN: " a listing of
// moves already says; "-" when the descheduler said nothing.
func (m Move) Reason() string {
	if m.Why == "" {
		return "-"
	}
	if _, rest, ok := strings.Cut(m.Why, ": "); ok && strings.HasPrefix(m.Why, "Moved off ") {
		return rest
	}
	return m.Why
}

// What a move that undid an earlier one is (Move.Undid).
const (
	// MoveLoop undid an earlier move while nothing changed in the cluster.
	MoveLoop = "loop"
	// MoveReMove undid it after a change (a hog, a node, a scale).
	MoveReMove = "re-move after a change"
)
