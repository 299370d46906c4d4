package balance

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/ballast-sched/ballast/core/loadmodel"
	"github.com/ballast-sched/ballast/core/moves"
)

// move is one eviction the plugin made: what left which node, where it was
// expected to go, where its replacement really went, and what that did to
// both nodes' usage.
type move struct {
	workload Workload
	// pod is the pod evicted.
	pod                 types.UID
	source, destination string
	at                  time.Time
	// sourceLoad and destinationLoad are the pod's estimated share of each
	// node's allocatable.
	sourceLoad, destinationLoad NodeLoad
	// landedBack holds replacement pods already counted as ping-pong.
	landedBack sets.Set[types.UID]
	// replacement is the pod taken for this move's replacement, the first
	// pod of the workload created after the move that no earlier move took,
	// and landedOn the node it runs on; empty until one runs.
	replacement types.UID
	landedOn    string
	// existed holds the workload's pods listed just before the move
	// (Existed): none of them replaces it. Nil for a move read back from
	// the cluster, whose replacement is told by its creation stamp.
	existed sets.Set[types.UID]
	// replacementUsage is what the replacement used in the last cycle that
	// measured it, in percent of the node it runs on (MeasureReplacements);
	// nil until measured.
	replacementUsage NodeLoad
	// seen is the last cycle that still listed the pod on its source, and
	// grace its termination grace period as listed then; goneAt is when it
	// was gone, as NoteGone works it out: zero until a cycle no longer
	// lists it.
	seen, goneAt time.Time
	grace        time.Duration
	// hot is set when the pod was moved to cool its source, a node over
	// its high thresholds; pull when a node far below the cluster's mean,
	// the destination, pulled it.
	hot, pull bool
	// why says why the pod was moved; sourceUsage and destinationUsage are
	// both nodes' usage when it was (Note), and sourceAfter the source's
	// usage in the first cycle after the replacement ran (SetCool).
	why                           string
	sourceUsage, destinationUsage NodeLoad
	sourceAfter                   NodeLoad
}

// receivedBy reports whether node got this move's pod: the node its
// replacement runs on, or, until one runs, the node it was expected on.
func (m *move) receivedBy(node string) bool {
	if m.landedOn != "" {
		return m.landedOn == node
	}
	return m.destination == node
}

// brought is what this move's pod adds to the node that got it: the share
// the move expected, or what its replacement was last measured using where
// that is more. A replacement using more than expected (a cache filling, a
// spike of its own) heats its node itself; that heat is the move's doing,
// not a change of the cluster (overtaken).
func (m *move) brought() NodeLoad {
	out := maps.Clone(m.destinationLoad)
	if out == nil {
		out = NodeLoad{}
	}
	for r, v := range m.replacementUsage {
		out[r] = max(out[r], v)
	}
	return out
}

// createdAfter reports whether pod was created after the move, so that it
// may be its replacement: a pod of the workload not listed just before the
// move. Creation stamps would say nothing when the API server's clock and
// the descheduler's disagree (a Raspberry Pi without a clock battery whose
// time is not yet synchronised, a simulated clock); they only decide for a
// move read back from the cluster, whose listing was not kept. The API
// server stamps a creation in whole seconds, and a controller replaces an
// evicted pod within milliseconds: the replacement's stamp is most often
// earlier than the move's own time, in the same second. So a pod created in
// the move's second counts, unless it is the pod moved.
func (m *move) createdAfter(pod *v1.Pod) bool {
	if pod.UID == m.pod {
		return false
	}
	if m.existed != nil {
		return !m.existed.Has(pod.UID)
	}
	return !pod.CreationTimestamp.Time.Before(m.at.Truncate(time.Second))
}

// Store is the plugin's memory across descheduling cycles: hot streaks and
// recent moves. It lives on the plugin instance, or is handed in by whoever
// builds the plugin when it must outlive one.
type Store struct {
	mu      sync.Mutex
	streaks hotStreaks
	moves   []*move
	// keep is the longest memory any plugin sharing the store asked Expire
	// for: a move is forgotten only once none of them needs it.
	keep time.Duration
	// warned holds when each growing pod was last warned about.
	warned map[types.UID]time.Time
	// version is the version of the moves kept in the cluster this process
	// last read or wrote, and saved what it wrote (Deps.Recall, Deps.Keep);
	// rewriting is set while what is kept must be written over whatever it
	// holds (unreadable, or missing: version empty).
	version   string
	saved     []byte
	rewriting bool
	// plan is LoadAwareBalance's plan (Plan, SetPlan).
	plan *moves.Rebalance
	// firstListed is when Listed first saw each pod, zero for those the
	// first call after a start found; arrived when each pod that first
	// appeared after a move of its workload did.
	firstListed map[types.UID]time.Time
	arrived     map[types.UID]time.Time
	// lastListed is when Listed last ran; awaited how many replacements
	// each workload's moves since are still to bring.
	lastListed time.Time
	awaited    map[Workload]int
	// loads, low and high are the current cycle's node loads and its low
	// and high thresholds (SetCool).
	loads     map[string]NodeLoad
	low, high ResourceThresholds
	// shape and reshaped are the schedulable nodes the last cycle saw and
	// when they last changed (ObserveShape).
	shape     string
	shapeSeen bool
	reshaped  time.Time
}

// NewStore returns an empty memory.
func NewStore() *Store {
	return &Store{streaks: hotStreaks{}}
}

// MovedOnto reports whether a pod of w was moved onto node within cooldown
// by an earlier cycle, whether the scheduler put its replacement there or
// the move expected it there: evicting w from either would undo that move.
// Moves of the current cycle (made at now) do not count. A node a workload was moved
// off stays a source: a hot node may take several cycles to cool; a
// replacement that landed back on it is a bounce (Bounced), not a move onto it.
//
// Only moves after since count: a move made before the cluster took another
// shape (ObserveShape) was the best step for a cluster that is gone, and
// moving on from it is no loop; nor does a move overtaken by heat on the
// node that got its pod (SetCool).
func (s *Store) MovedOnto(w Workload, node string, since, now time.Time, cooldown time.Duration) bool {
	for _, m := range s.moves {
		if m.onto(w, node, now, cooldown) && !m.at.Before(since) && !s.overtaken(m) {
			return true
		}
	}
	return false
}

// onto reports whether m, made by a cycle before now and within `within`
// of it, moved a pod of w onto node: the node its replacement runs on, or
// the one it was expected on (a node it was moved off stays a source).
func (m *move) onto(w Workload, node string, now time.Time, within time.Duration) bool {
	return m.workload == w && m.source != node && (m.destination == node || m.landedOn == node) && m.at.Before(now) && now.Sub(m.at) < within
}

// Received reports whether a pod of w was moved onto node within `within`
// before now by an earlier cycle, whatever became of the move since: it
// counts the moves MovedOnto no longer holds (overtaken, or made before the
// cluster took another shape) too.
func (s *Store) Received(w Workload, node string, now time.Time, within time.Duration) bool {
	for _, m := range s.moves {
		if m.onto(w, node, now, within) {
			return true
		}
	}
	return false
}

// InFlight is the correction to apply to node's usage, read on stats, for
// moves whose effect the statistic does not fully show yet. A move at t0 is
// only partly in an average (or a percentile) over window w sampled at ts;
// the part still missing is (1 − f) with f = (ts − t0)/w clamped to [0, 1].
// An error in f errs towards fewer evictions: the source looks cooler and
// the destination warmer than they are. A resource read on its newest
// sample shows all of the move at the source once a sample was taken after
// the pod was gone (NoteGone), and none of it before, nor in a sample taken
// at the move's very time (a simulated clock's): the fraction would
// credit a node whose samples already show the move with it again for a
// whole window, holding back the next move off a node still over its
// limit. The destination keeps the fraction: a replacement's memory grows
// as it starts. Once a replacement runs elsewhere than expected, the
// expected destination gets no correction: the pod's share was estimated
// for that node, and the node it landed on shows the pod in its own window.
func (s *Store) InFlight(node string, sampled time.Time, window time.Duration, stats loadmodel.Statistics) NodeLoad {
	out := NodeLoad{}
	for _, m := range s.moves {
		toNode := m.destination == node && m.receivedBy(node)
		if m.source != node && !toNode {
			continue
		}
		missing := 1.0
		if window > 0 {
			f := float64(sampled.Sub(m.at)) / float64(window)
			missing = 1 - min(max(f, 0), 1)
		}
		for r, v := range m.sourceLoad {
			if m.source != node {
				continue
			}
			if stats[r] == loadmodel.Latest {
				if !sampled.After(m.at) || m.goneAt.IsZero() || sampled.Before(m.goneAt) {
					out[r] -= v
				}
				continue
			}
			out[r] -= missing * v
		}
		for r, v := range m.destinationLoad {
			if toNode {
				out[r] += missing * v
			}
		}
	}
	return out
}

func (s *Store) counted(uid types.UID) bool {
	for _, m := range s.moves {
		if m.landedBack.Has(uid) {
			return true
		}
	}
	return false
}

// remember records a move.
func (s *Store) remember(m *move) {
	m.landedBack = sets.New[types.UID]()
	s.moves = append(s.moves, m)
}

// Expire forgets moves older than keep, or than the longest keep an
// earlier call asked for: plugins sharing the store may remember for
// different times (balanceCooldown), and the longest wins.
func (s *Store) Expire(now time.Time, keep time.Duration) {
	s.keep = max(s.keep, keep)
	kept := s.moves[:0]
	for _, m := range s.moves {
		if now.Sub(m.at) < s.keep {
			kept = append(kept, m)
		}
	}
	clear(s.moves[len(kept):])
	s.moves = kept
}

// Followed is what one Follow learnt.
type Followed struct {
	// Back counts, per source node, the new pods of moved workloads
	// created after the move that run on the node they were moved off
	// (ping-pong); each pod is counted once.
	Back map[string]int
	// AsPlanned and Elsewhere count the replacements first seen running,
	// on the node their move planned and on another one.
	AsPlanned, Elsewhere int
}

// Follow reads where the replacements of remembered moves run. Each move
// takes one replacement, a pod of its workload created after it that no
// earlier move took (pickReplacement), and from then on guards the node
// that pod runs on (MovedOnto) as well as the one it expected.
func (s *Store) Follow(nodes []string, podsOn func(node string) []*v1.Pod) Followed {
	moved := sets.New[Workload]()
	taken := sets.New[types.UID]()
	for _, m := range s.moves {
		moved.Insert(m.workload)
		if m.replacement != "" {
			taken.Insert(m.replacement)
		}
	}
	var candidates []*v1.Pod
	for _, node := range nodes {
		for _, pod := range podsOn(node) {
			if w, ok := WorkloadOf(pod); ok && moved.Has(w) && !taken.Has(pod.UID) && pod.DeletionTimestamp == nil {
				candidates = append(candidates, pod)
			}
		}
	}
	// Oldest first; the informer lists in no set order, and the API server
	// stamps whole seconds: node names break the ties.
	slices.SortStableFunc(candidates, func(a, b *v1.Pod) int {
		return cmp.Or(a.CreationTimestamp.Time.Compare(b.CreationTimestamp.Time), cmp.Compare(a.Spec.NodeName, b.Spec.NodeName))
	})
	out := Followed{Back: map[string]int{}}
	// Moves are remembered in the order they were made.
	for _, m := range s.moves {
		if m.replacement != "" {
			continue
		}
		pod := m.pickReplacement(candidates, taken)
		if pod == nil {
			continue
		}
		m.replacement, m.landedOn = pod.UID, pod.Spec.NodeName
		taken.Insert(pod.UID)
		if m.landedOn == m.destination {
			out.AsPlanned++
		} else {
			out.Elsewhere++
		}
	}

	for _, m := range s.moves {
		for _, pod := range podsOn(m.source) {
			if !m.createdAfter(pod) || s.counted(pod.UID) {
				continue
			}
			if w, ok := WorkloadOf(pod); ok && w == m.workload {
				m.landedBack.Insert(pod.UID)
				out.Back[m.source]++
			}
		}
	}
	return out
}

// MeasureReplacements records, for every move whose replacement runs
// (Follow), what the replacement uses now, as usageOf reports it for the
// pod uid on node in percent of that node; usageOf reports false when it
// has no measure, which keeps the last one. Follow must have run first.
func (s *Store) MeasureReplacements(usageOf func(node string, uid types.UID) (NodeLoad, bool)) {
	for _, m := range s.moves {
		if m.replacement == "" {
			continue
		}
		if u, ok := usageOf(m.landedOn, m.replacement); ok {
			m.replacementUsage = u
		}
	}
}

// NoteGone works out, for every move whose pod podsOn no longer lists on
// its source node, when the pod was gone: a sample taken from then on shows
// the move at the source (InFlight). A pod still terminating is listed, and
// still uses what it used. An evicted pod is gone by the end of its
// termination grace period (30 s unless it says otherwise), which a
// descheduling interval of minutes may be far from: a cycle that no longer
// lists it takes the earlier of now and the move's time plus the grace
// period. A pod a cycle still listed after that (a rollout's, deleted only
// once its replacement is Ready, or one a node did not stop in time) was
// gone at some moment up to now, which is what it takes.
func (s *Store) NoteGone(now time.Time, podsOn func(node string) []*v1.Pod) {
	for _, m := range s.moves {
		if !m.goneAt.IsZero() || m.pod == "" {
			continue
		}
		pods := podsOn(m.source)
		if i := slices.IndexFunc(pods, func(p *v1.Pod) bool { return p.UID == m.pod }); i >= 0 {
			m.seen, m.grace = now, gracePeriod(pods[i])
			continue
		}
		// Never listed since the move (a pod gone at once, or a move
		// recalled from the cluster): Kubernetes' default grace period.
		m.goneAt = now
		if by := m.at.Add(cmp.Or(m.grace, defaultGrace)); !m.seen.After(by) && by.Before(now) {
			m.goneAt = by
		}
	}
}

// defaultGrace is Kubernetes' termination grace period for a pod that names
// none.
const defaultGrace = v1.DefaultTerminationGracePeriodSeconds * time.Second

// gracePeriod is pod's termination grace period.
func gracePeriod(pod *v1.Pod) time.Duration {
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		return time.Duration(*g) * time.Second
	}
	return defaultGrace
}

// The methods below let other Ballast balance plugins share one Store, so
// that what one plugin moved the others neither undo nor repeat. Callers
// hold the lock around a whole cycle, as Balance does.

// Listing is what Listed tells of the pods of workloads listed in a cycle.
type Listing struct {
	// Arrived is when each pod that first appeared after a move of its
	// workload did: a move's replacement, whichever move each replaces (a
	// pod a scale adds after a move counts too).
	Arrived map[types.UID]time.Time
	// New is when each other pod was first listed, for the pods that
	// appeared since the first call after a start.
	New map[types.UID]time.Time
	// Later are the new pods of workloads moved in this very cycle: the
	// replacements of its own moves, which the informer may or may not
	// list yet. They are judged at the next cycle, and left out of this
	// one, so that a cycle sees the same cluster whichever way that race
	// goes.
	Later sets.Set[types.UID]
}

// ListedPod is a pod of a workload as a cycle lists it: its workload and
// the node it is bound to.
type ListedPod struct {
	Workload Workload
	Node     string
}

// Listed is told every pod of a workload listed this cycle (pods, at now)
// and says which arrived after a move of their workload and which are new,
// by when the descheduler first listed them: each move made since the last
// listing accounts for one new pod of its workload, the others are new.
// Creation stamps would say
// nothing when the API server's clock and the descheduler's disagree (a
// simulated clock, a node whose clock is off). The first call after a
// start only learns the pods: they count as neither.
//
// Of a workload's new pods, those on a node a move since the last listing
// expected its replacement on are taken first, then by node name: the same
// cluster, the same replacements, whatever the pods' names and UIDs.
func (s *Store) Listed(pods map[types.UID]ListedPod, now time.Time) Listing {
	first := s.firstListed == nil
	if first {
		// The replacements of the moves made before (a restart's, read
		// back from the cluster) run already: they are learned as old.
		s.firstListed, s.arrived, s.awaited, s.lastListed = map[types.UID]time.Time{}, map[types.UID]time.Time{}, map[Workload]int{}, now
	}
	// Each move made since the last listing brings one replacement.
	movedNow := sets.New[Workload]()
	expected := sets.New[ListedPod]()
	for _, m := range s.moves {
		if !m.at.Before(s.lastListed) && m.at.Before(now) {
			s.awaited[m.workload]++
			expected.Insert(ListedPod{Workload: m.workload, Node: m.destination})
		}
		if m.at.Equal(now) {
			movedNow.Insert(m.workload)
		}
	}
	out := Listing{Arrived: map[types.UID]time.Time{}, New: map[types.UID]time.Time{}, Later: sets.New[types.UID]()}
	// The pods first seen now, in a set order: which of a workload's new
	// pods are its replacements must not depend on a map's.
	var fresh []types.UID
	for uid := range pods {
		if _, ok := s.firstListed[uid]; !ok {
			fresh = append(fresh, uid)
		}
	}
	notExpected := func(uid types.UID) int {
		if expected.Has(pods[uid]) {
			return 0
		}
		return 1
	}
	slices.SortFunc(fresh, func(a, b types.UID) int {
		pa, pb := pods[a], pods[b]
		return cmp.Or(cmp.Compare(pa.Workload.String(), pb.Workload.String()), cmp.Compare(notExpected(a), notExpected(b)),
			cmp.Compare(pa.Node, pb.Node), cmp.Compare(a, b))
	})
	for _, uid := range fresh {
		w := pods[uid].Workload
		switch {
		case !first && movedNow.Has(w):
			out.Later.Insert(uid)
		case first:
			s.firstListed[uid] = time.Time{}
		case s.awaited[w] > 0:
			s.awaited[w]--
			s.firstListed[uid], s.arrived[uid] = now, now
		default:
			s.firstListed[uid] = now
		}
	}
	s.lastListed = now
	for uid := range pods {
		if at, ok := s.arrived[uid]; ok {
			out.Arrived[uid] = at
		} else if at := s.firstListed[uid]; !at.IsZero() {
			out.New[uid] = at
		}
	}
	for uid := range s.firstListed {
		if _, ok := pods[uid]; !ok {
			delete(s.firstListed, uid)
			delete(s.arrived, uid)
		}
	}
	return out
}

// Plan is the plan kept; nil when there is none.
func (s *Store) Plan() *moves.Rebalance { return s.plan }

// SetPlan keeps plan, which Keep writes to the cluster with the moves.
func (s *Store) SetPlan(plan *moves.Rebalance) { s.plan = plan }

// Lock takes the memory for one descheduling cycle.
func (s *Store) Lock() { s.mu.Lock() }

// Unlock releases the memory.
func (s *Store) Unlock() { s.mu.Unlock() }

// Remember records that pod, of w, was evicted from source at at and is
// expected on destination, with the pod's estimated share of each node.
func (s *Store) Remember(w Workload, pod types.UID, source, destination string, at time.Time, sourceLoad, destinationLoad NodeLoad) {
	s.remember(&move{workload: w, pod: pod, source: source, destination: destination, at: at,
		sourceLoad: sourceLoad, destinationLoad: destinationLoad})
}

// RememberCooling records a move like Remember, made to cool source, a node
// over its high thresholds.
func (s *Store) RememberCooling(w Workload, pod types.UID, source, destination string, at time.Time, sourceLoad, destinationLoad NodeLoad) {
	s.remember(&move{workload: w, pod: pod, source: source, destination: destination, at: at,
		sourceLoad: sourceLoad, destinationLoad: destinationLoad, hot: true})
}

// SetCool tells the memory each node's load this cycle (moves in flight
// included), the low thresholds under which a node is cool and the high
// ones over which it is hot. A move made to cool a node that would be cool
// now even with the moved pod back on it answered a heat that has gone (the
// process outside Kubernetes stopped, the spike ended): the cluster changed
// since, and undoing or following up that move is a new decision, not a
// loop, so the cooldowns that guard against loops (MovesElsewhere,
// MovedOff) no longer count it. A node cool only because its pods left is
// not enough: the move itself made it so.
//
// The other way round, a move whose pod went to a node that is hot now,
// while the rest of that node grew since the move by more than the pod
// brought, was overtaken: something else heated the node (a process outside
// Kubernetes, a spike of its other pods) after the move found room there.
// Keeping the workload on that node, or away from the node it left, would
// hold it where the cluster no longer has room for it, so MovedOnto and
// MovedOff no longer count that move either. A node hot because the pod
// uses a little more than the move expected is not enough: the move itself
// made it so, and undoing it would be a loop.
func (s *Store) SetCool(loads map[string]NodeLoad, low, high ResourceThresholds) {
	s.loads, s.low, s.high = loads, low, high
	for _, m := range s.moves {
		if load, ok := loads[m.source]; ok && m.landedOn != "" && m.sourceAfter == nil {
			m.sourceAfter = maps.Clone(load)
		}
	}
}

// RememberPull records a move like Remember, pulled by destination, a node
// far below the cluster's mean.
func (s *Store) RememberPull(w Workload, pod types.UID, source, destination string, at time.Time, sourceLoad, destinationLoad NodeLoad) {
	s.remember(&move{workload: w, pod: pod, source: source, destination: destination, at: at,
		sourceLoad: sourceLoad, destinationLoad: destinationLoad, pull: true})
}

// Pulling reports whether node pulled a pod within the last `within`
// before now: a node that began to pull, far below the cluster's mean, goes
// on pulling until it reaches the mean, not only until it is back within
// the deviation, where the band's lower edge would leave it as far below
// the mean as the deviation.
func (s *Store) Pulling(node string, now time.Time, within time.Duration) bool {
	for _, m := range s.moves {
		if m.pull && m.destination == node && m.at.Before(now) && now.Sub(m.at) <= within {
			return true
		}
	}
	return false
}

// pickReplacement chooses m's replacement among candidates, oldest first,
// none of taken: a pod of its workload created after it. Where the pods
// listed before the move tell which came after it, every such pod is one,
// and their stamps, in whole seconds of the API server's clock, rank them
// no better than at random: the one on the node the move expected is
// taken first, then by node name, so that the same cluster gives the same
// replacements.
func (m *move) pickReplacement(candidates []*v1.Pod, taken sets.Set[types.UID]) *v1.Pod {
	elsewhere := func(pod *v1.Pod) int {
		if pod.Spec.NodeName == m.destination {
			return 0
		}
		return 1
	}
	var best *v1.Pod
	for _, pod := range candidates {
		if w, _ := WorkloadOf(pod); w != m.workload || !m.createdAfter(pod) || taken.Has(pod.UID) {
			continue
		}
		if m.existed == nil {
			return pod
		}
		if best == nil || cmp.Or(cmp.Compare(elsewhere(pod), elsewhere(best)), cmp.Compare(pod.Spec.NodeName, best.Spec.NodeName)) < 0 {
			best = pod
		}
	}
	return best
}

// Existed records the pods of its workload that were listed just before
// pod was moved: none of them is its replacement (Follow).
func (s *Store) Existed(pod types.UID, pods sets.Set[types.UID]) {
	for _, m := range s.moves {
		if m.pod == pod && pod != "" {
			m.existed = pods
		}
	}
}

// Note records why the move of pod was made and both nodes' usage when it
// was, for those who ask afterwards (`ballast explain`).
func (s *Store) Note(pod types.UID, why string, sourceUsage, destinationUsage NodeLoad) {
	for _, m := range s.moves {
		if m.pod == pod && pod != "" {
			m.why, m.sourceUsage, m.destinationUsage = why, maps.Clone(sourceUsage), maps.Clone(destinationUsage)
		}
	}
}

// outdated reports whether m answered a heat that has gone (SetCool).
func (s *Store) outdated(m *move) bool {
	if !m.hot || len(s.low) == 0 {
		return false
	}
	load, ok := s.loads[m.source]
	return ok && s.low.AllBelow(load.Add(m.sourceLoad, 1))
}

// overtaken reports whether the node that got m's pod is over a high
// threshold now on a resource whose use by the rest of the node has grown
// since the move by more than the pod brought: something other than the
// move heated it (SetCool). The rest of the node is all but the pods moved
// onto it since, m's included, each counted at what it brought (the more
// of its expected share and its replacement's measured use): moves Ballast
// made there are its own doing, each guarded by its own record, not a
// change of the cluster, and so is a replacement that grew once it ran. Without the
// node's usage at the move (a move kept by an older version), the node must
// be over the threshold even without those pods.
func (s *Store) overtaken(m *move) bool {
	if len(s.high) == 0 {
		return false
	}
	node := m.destination
	if m.landedOn != "" {
		node = m.landedOn
	}
	load, ok := s.loads[node]
	if !ok {
		return false
	}
	// The moves are kept in the order they were made: those from m on
	// came after the usage m recorded, even within one cycle.
	rest, since := load, false
	for _, later := range s.moves {
		since = since || later == m
		if since && later.receivedBy(node) {
			rest = rest.Add(later.brought(), -1)
		}
	}
	for _, r := range s.high.Above(load) {
		before, known := m.destinationUsage[r]
		if known && rest[r]-before > m.destinationLoad[r] || !known && rest[r] > s.high[r] {
			return true
		}
	}
	return false
}

// Evicted reports whether a remembered move evicted the pod: the
// descheduler's informer may still list it, terminating or not even that
// yet, and no plugin must count it on its node or evict it again.
func (s *Store) Evicted(uid types.UID) bool {
	for _, m := range s.moves {
		if m.pod == uid && uid != "" {
			return true
		}
	}
	return false
}

// Replaces reports whether uid is the replacement of a remembered move,
// whose usage InFlight already counts on the node it landed on when that is
// the one expected. Follow must have run first.
func (s *Store) Replaces(uid types.UID) bool {
	for _, m := range s.moves {
		if m.replacement == uid && uid != "" {
			return true
		}
	}
	return false
}

// Bounced reports whether, within cooldown, a pod of w was moved off node
// and a replacement landed back on it. Follow must have run first.
func (s *Store) Bounced(w Workload, node string, now time.Time, cooldown time.Duration) bool {
	for _, m := range s.moves {
		if m.workload == w && m.source == node && now.Sub(m.at) < cooldown && m.landedBack.Len() > 0 {
			return true
		}
	}
	return false
}

// ReplicasPerBalanceMove is how many of a workload's replicas buy
// balancing one move of the workload per balanceCooldown: a quarter of them
// may be restarted, as a Deployment's rolling update takes down at once by
// default (maxUnavailable 25%).
const ReplicasPerBalanceMove = 4

// BalanceMoves is how many moves balancing may make of a workload that runs
// replicas pods within balanceCooldown: a quarter of its replicas, at least
// one. Every move restarts a pod: a three-replica workload moved twice in
// twenty minutes is what a user notices first, while a seventy-replica one
// spread by requests over nodes of four sizes needs more than one of its
// pods moved before the big nodes carry their share, and loses no more to
// those restarts than to its own rollout.
func BalanceMoves(replicas int) int {
	return max(1, replicas/ReplicasPerBalanceMove)
}

// MovesElsewhere counts the moves made within cooldown, this cycle's
// included, of pods of w off nodes other than node. Balancing moves a
// workload at most BalanceMoves times per balanceCooldown; a move off the
// same node again finishes one of those (a cycle's eviction limits may
// spread it over several cycles), while a move off another node is one
// more, or an undo. This cycle's moves count so that two nodes shedding in
// one cycle cannot take down more of a workload than its budget allows.
// Pulls do not: a node that joined or came back is a change that lasts,
// paced by MovesNow, and the workload it pulled from may still have to
// leave the node furthest above the mean.
func (s *Store) MovesElsewhere(w Workload, node string, now time.Time, cooldown time.Duration) int {
	n := 0
	for _, m := range s.moves {
		if m.workload == w && !m.pull && m.source != node && !m.at.After(now) && now.Sub(m.at) < cooldown && !s.outdated(m) {
			n++
		}
	}
	return n
}

// OutOfBalanceMoves reports whether balancing has moved w, a workload of
// replicas pods, off nodes other than node as often as it may within
// cooldown (MovesElsewhere against BalanceMoves).
func (s *Store) OutOfBalanceMoves(w Workload, replicas int, node string, now time.Time, cooldown time.Duration) bool {
	return s.MovesElsewhere(w, node, now, cooldown) >= BalanceMoves(replicas)
}

// MovesNow counts the moves of pods of w made at now, this cycle's, off
// any node. A pull moves a workload at the pace of its rolling update:
// BalanceMoves of its pods in one cycle at most, whatever earlier cycles
// moved.
func (s *Store) MovesNow(w Workload, now time.Time) int {
	n := 0
	for _, m := range s.moves {
		if m.workload == w && m.at.Equal(now) {
			n++
		}
	}
	return n
}

// MovedOff reports whether, within cooldown, a pod of w was moved off
// node: sending it back there would undo that move. A move that answered a
// heat that has gone, or was overtaken by heat where its pod went, does
// not count (SetCool).
func (s *Store) MovedOff(w Workload, node string, now time.Time, cooldown time.Duration) bool {
	for _, m := range s.moves {
		if m.workload == w && m.source == node && now.Sub(m.at) < cooldown && !s.outdated(m) && !s.overtaken(m) {
			return true
		}
	}
	return false
}

// Destinations returns where the remembered moves went, oldest first.
// Callers hold the lock.
func (s *Store) Destinations() []string {
	out := make([]string, len(s.moves))
	for i, m := range s.moves {
		out[i] = m.destination
	}
	return out
}

// ObserveShape records the nodes that take pods this cycle and returns when
// that set last changed: a node joined, left, was cordoned or uncordoned.
// It is remembered by this process only: after a start the first cycle sets
// it, and the zero time it returns until a change is seen releases nothing.
// The caller holds the store (Lock).
func (s *Store) ObserveShape(schedulable []string, now time.Time) time.Time {
	shape := strings.Join(slices.Sorted(slices.Values(schedulable)), ",")
	if s.shapeSeen && s.shape != shape {
		s.reshaped = now
	}
	s.shape, s.shapeSeen = shape, true
	return s.reshaped
}
