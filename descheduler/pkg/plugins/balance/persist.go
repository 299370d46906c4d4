package balance

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/ballast-sched/ballast/core/moves"
)

// maxKeptMoves bounds what is written: the newest moves, far more than any
// cooldown needs on a homelab (five evictions a cycle, a cycle every five
// minutes, is 60 an hour), and far under a ConfigMap's 1 MiB.
const maxKeptMoves = 1000

// Event reasons and action of the warnings about the kept moves: Keep
// writes over what could not be read, and creates what was deleted.
const (
	ReasonMovesUnreadable = "MovesUnreadable"
	ReasonMovesMissing    = "MovesMissing"
	actionRepaired        = "Repaired"
)

// Persistence keeps the moves of a Store in the cluster, so that a restart
// or a new leader remembers what the last one moved and undoes none of it.
type Persistence interface {
	// Load returns what Save last wrote and its version; no data and an
	// empty version when there is nothing kept: never written, or deleted.
	Load(ctx context.Context) (data []byte, version string, err error)
	// Save writes data over version and returns the new version; an empty
	// version creates what Load found missing. A version that is not the
	// current one is a conflict.
	Save(ctx context.Context, data []byte, version string) (string, error)
	// Object is what the kept moves are, for events about them.
	Object() runtime.Object
}

// MovesConfigMap keeps the moves in a ConfigMap the chart creates empty.
// The descheduler reads and updates it, and creates it again when it was
// deleted, with the labels and annotations it last read on it (the
// chart's, by which an uninstall finds it). Make it with
// NewMovesConfigMap.
type MovesConfigMap struct {
	client          kubernetes.Interface
	namespace, name string
	// mu guards last, the ConfigMap as it was last read or written, without
	// its data.
	mu   sync.Mutex
	last *v1.ConfigMap
}

// NewMovesConfigMap returns the ConfigMap namespace/name as Persistence.
func NewMovesConfigMap(client kubernetes.Interface, namespace, name string) *MovesConfigMap {
	return &MovesConfigMap{client: client, namespace: namespace, name: name}
}

// Load implements Persistence.
func (m *MovesConfigMap) Load(ctx context.Context) ([]byte, string, error) {
	cm, err := m.client.CoreV1().ConfigMaps(m.namespace).Get(ctx, m.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading ConfigMap %s/%s: %w", m.namespace, m.name, err)
	}
	m.remember(cm)
	return []byte(cm.Data[moves.Key]), cm.ResourceVersion, nil
}

// Save implements Persistence.
func (m *MovesConfigMap) Save(ctx context.Context, data []byte, version string) (string, error) {
	cms := m.client.CoreV1().ConfigMaps(m.namespace)
	if version == "" {
		cm := m.Object().(*v1.ConfigMap)
		cm.ResourceVersion, cm.UID = "", ""
		cm.Data = map[string]string{moves.Key: string(data)}
		out, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			return "", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, m.name, fmt.Errorf("created by another replica"))
		}
		if err != nil {
			return "", fmt.Errorf("creating ConfigMap %s/%s: %w", m.namespace, m.name, err)
		}
		m.remember(out)
		return out.ResourceVersion, nil
	}
	cm, err := cms.Get(ctx, m.name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading ConfigMap %s/%s: %w", m.namespace, m.name, err)
	}
	if cm.ResourceVersion != version {
		return "", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, m.name, fmt.Errorf("written by another replica since version %s", version))
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[moves.Key] = string(data)
	out, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return "", fmt.Errorf("writing ConfigMap %s/%s: %w", m.namespace, m.name, err)
	}
	m.remember(out)
	return out.ResourceVersion, nil
}

// Object implements Persistence: the ConfigMap as it was last read or
// written, without its data; its name and namespace only before then.
func (m *MovesConfigMap) Object() runtime.Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last == nil {
		return &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: m.namespace, Name: m.name}}
	}
	return m.last.DeepCopy()
}

func (m *MovesConfigMap) remember(cm *v1.ConfigMap) {
	kept := &v1.ConfigMap{ObjectMeta: *cm.ObjectMeta.DeepCopy()}
	kept.ManagedFields = nil
	m.mu.Lock()
	defer m.mu.Unlock()
	m.last = kept
}

// encode writes the newest maxKeptMoves moves, oldest first, and the plan;
// nothing at all when there is neither.
func (s *Store) encode() ([]byte, error) {
	kept := s.moves[max(0, len(s.moves)-maxKeptMoves):]
	out := make([]moves.Saved, 0, len(kept))
	for _, m := range kept {
		back := m.landedBack.UnsortedList()
		slices.Sort(back)
		// The pods listed before the move tell its replacement once it
		// runs, after a restart too; then they tell nothing more.
		var existed []types.UID
		if m.replacement == "" && m.existed != nil {
			existed = sets.List(m.existed)
		}
		out = append(out, moves.Saved{Workload: m.workload, Pod: m.pod, Source: m.source, Destination: m.destination,
			At: m.at.UTC(), SourceLoad: m.sourceLoad, DestinationLoad: m.destinationLoad,
			Replacement: m.replacement, LandedOn: m.landedOn, LandedBack: back, Existed: existed, Hot: m.hot, Pull: m.pull,
			Why: m.why, SourceUsage: m.sourceUsage, DestinationUsage: m.destinationUsage, SourceAfter: m.sourceAfter})
	}
	return moves.EncodeKept(moves.Kept{Moves: out, Plan: s.plan})
}

// merge adds the moves in data that the Store does not hold; for one it
// holds, it keeps whichever knows where the replacement landed. Moves stay
// in the order they were made. The plan judged last wins.
func (s *Store) merge(data []byte) (int, error) {
	kept, err := moves.DecodeKept(data)
	if err != nil {
		return 0, err
	}
	saved := kept.Moves
	if p := kept.Plan; p != nil && (s.plan == nil || p.Checked.After(s.plan.Checked)) {
		s.plan = p
	}
	type key struct {
		w      Workload
		pod    types.UID
		source string
		at     time.Time
	}
	held := make(map[key]*move, len(s.moves))
	for _, m := range s.moves {
		held[key{m.workload, m.pod, m.source, m.at.UTC()}] = m
	}
	added := 0
	for _, sm := range saved {
		if m, ok := held[key{sm.Workload, sm.Pod, sm.Source, sm.At.UTC()}]; ok {
			if m.replacement == "" && sm.Replacement != "" {
				m.replacement, m.landedOn = sm.Replacement, sm.LandedOn
			}
			if m.why == "" {
				m.why, m.sourceUsage, m.destinationUsage = sm.Why, sm.SourceUsage, sm.DestinationUsage
			}
			if m.sourceAfter == nil {
				m.sourceAfter = sm.SourceAfter
			}
			if m.existed == nil && sm.Existed != nil {
				m.existed = sets.New(sm.Existed...)
			}
			m.landedBack.Insert(sm.LandedBack...)
			continue
		}
		m := &move{workload: sm.Workload, pod: sm.Pod, source: sm.Source, destination: sm.Destination, at: sm.At,
			sourceLoad: sm.SourceLoad, destinationLoad: sm.DestinationLoad, replacement: sm.Replacement, landedOn: sm.LandedOn,
			landedBack: sets.New(sm.LandedBack...), hot: sm.Hot, pull: sm.Pull, why: sm.Why, sourceUsage: sm.SourceUsage,
			destinationUsage: sm.DestinationUsage, sourceAfter: sm.SourceAfter}
		if sm.Existed != nil {
			m.existed = sets.New(sm.Existed...)
		}
		// A move data holds twice (edited by hand) is one move: counted
		// twice, its pod would weigh twice on its destination.
		held[key{sm.Workload, sm.Pod, sm.Source, sm.At.UTC()}] = m
		s.moves = append(s.moves, m)
		added++
	}
	slices.SortStableFunc(s.moves, func(a, b *move) int { return a.at.Compare(b.at) })
	return added, nil
}

// Recall reads the moves kept in the cluster into the Store, when they
// changed since this process last read or wrote them: the first cycle of a
// new leader, or of a restarted descheduler, starts from its predecessor's
// memory. A failure to read leaves the Store as it is and is logged; the
// cycle goes on with what this process remembers. Kept moves that cannot be
// decoded, or none kept at all (deleted), are written over by the next Keep
// with what this process remembers, and a Warning event says so. Callers
// hold the Store's lock.
func (d Deps) Recall(ctx context.Context, logger klog.Logger) {
	s := d.Store
	if d.Persist == nil {
		return
	}
	data, version, err := d.Persist.Load(ctx)
	if err != nil {
		logger.Error(err, "Reading the moves kept in the cluster; going on with this process's memory only")
		return
	}
	if version == "" {
		d.rewrite(logger, version, ReasonMovesMissing, "none kept (deleted?): creating it with the moves this process remembers")
		return
	}
	if version == s.version {
		return
	}
	added, err := s.merge(data)
	if err != nil {
		d.rewrite(logger, version, ReasonMovesUnreadable, "unreadable (%v): writing over it with the moves this process remembers", err)
		return
	}
	s.version, s.rewriting = version, false
	if enc, err := s.encode(); err == nil && bytes.Equal(enc, data) {
		// Nothing this process adds: no need to write it back.
		s.saved = data
	}
	if added > 0 {
		logger.Info("Recalled moves kept in the cluster", "moves", added, "remembered", len(s.moves))
	}
}

// rewrite has the next Keep write the Store's moves over version, whatever
// it holds, and warns once about it: why, note and its args say.
func (d Deps) rewrite(logger klog.Logger, version, why, note string, args ...any) {
	s := d.Store
	s.version = version
	if s.rewriting {
		return
	}
	s.rewriting = true
	obj := d.Persist.Object()
	what := "the kept moves"
	if o, err := meta.Accessor(obj); err == nil {
		what = fmt.Sprintf("ConfigMap %s/%s", o.GetNamespace(), o.GetName())
	}
	msg := what + ": " + fmt.Sprintf(note, args...)
	logger.Info("Repairing the moves kept in the cluster", "reason", why, "message", msg)
	if d.Events != nil {
		d.Events.Eventf(obj, nil, v1.EventTypeWarning, why, actionRepaired, "%s", msg)
	}
}

// Keep writes the Store's moves to the cluster when they changed since
// they were last written, or when Recall found them unreadable or missing.
// A conflict (another replica wrote meanwhile) is merged at the next Recall
// and written then. Callers hold the Store's lock.
func (d Deps) Keep(ctx context.Context, logger klog.Logger) {
	s := d.Store
	if d.Persist == nil {
		return
	}
	data, err := s.encode()
	if err != nil {
		logger.Error(err, "Encoding the moves to keep in the cluster")
		return
	}
	if !s.rewriting && bytes.Equal(data, s.saved) {
		return
	}
	version, err := d.Persist.Save(ctx, data, s.version)
	if err != nil {
		logger.Error(err, "Keeping the moves in the cluster; a restart would forget the newest", "moves", len(s.moves))
		return
	}
	if s.rewriting {
		logger.Info("Repaired the moves kept in the cluster", "moves", len(s.moves))
	}
	s.version, s.saved, s.rewriting = version, data, false
}

// Move is one move the descheduler remembers, as `ballast explain` reads it
// from the moves kept in the cluster.
type Move struct {
	Workload Workload  `json:"workload"`
	Pod      types.UID `json:"pod,omitempty"`
	// Source is the node the pod was moved off, Destination where the
	// descheduler expected its replacement, LandedOn where it ran (empty
	// until it did).
	Source      string    `json:"source"`
	Destination string    `json:"destination"`
	LandedOn    string    `json:"landedOn,omitempty"`
	At          time.Time `json:"at"`
	Why         string    `json:"why,omitempty"`
	// SourceUsage and DestinationUsage are both nodes' usage (percent)
	// when the pod was moved; ExpectedSource and ExpectedDestination what
	// the move was to make of it; SourceAfter the source's usage once the
	// replacement ran.
	SourceUsage         NodeLoad `json:"sourceUsage,omitempty"`
	DestinationUsage    NodeLoad `json:"destinationUsage,omitempty"`
	ExpectedSource      NodeLoad `json:"expectedSource,omitempty"`
	ExpectedDestination NodeLoad `json:"expectedDestination,omitempty"`
	SourceAfter         NodeLoad `json:"sourceAfter,omitempty"`
	// Bounced is true when a new pod of the workload ran on the source
	// after the move.
	Bounced bool `json:"bounced,omitempty"`
	// Cooling is true when the move was made to cool its source, a node
	// over its high thresholds; false for a move that balances.
	Cooling bool `json:"cooling,omitempty"`
}

// DecodeMoves reads the moves kept in the cluster (the MovesKey of the
// moves ConfigMap), oldest first.
func DecodeMoves(data []byte) ([]Move, error) {
	s := NewStore()
	if _, err := s.merge(data); err != nil {
		return nil, err
	}
	out := make([]Move, 0, len(s.moves))
	for _, m := range s.moves {
		mv := Move{Workload: m.workload, Pod: m.pod, Source: m.source, Destination: m.destination, LandedOn: m.landedOn, At: m.at,
			Why: m.why, SourceUsage: m.sourceUsage, DestinationUsage: m.destinationUsage, SourceAfter: m.sourceAfter,
			Bounced: m.landedBack.Len() > 0, Cooling: m.hot}
		// An expectation beyond float64 (figures edited by hand) is left
		// out: explain could not print it as JSON.
		if e := m.sourceUsage.Add(m.sourceLoad, -1); m.sourceUsage != nil && finite(e) {
			mv.ExpectedSource = e
		}
		if e := m.destinationUsage.Add(m.destinationLoad, 1); m.destinationUsage != nil && finite(e) {
			mv.ExpectedDestination = e
		}
		out = append(out, mv)
	}
	return out, nil
}

// finite reports whether every figure of l is a number JSON can hold.
func finite(l NodeLoad) bool {
	for _, v := range l {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return false
		}
	}
	return true
}

// DecodePlan reads the descheduler's plan from what it keeps in the
// cluster; nil when it keeps none.
func DecodePlan(data []byte) (*moves.Rebalance, error) {
	kept, err := moves.DecodeKept(data)
	return kept.Plan, err
}
