package balance

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Persistence keeps the moves of a Store in the cluster, so that a restart
// or a new leader remembers what the last one moved and undoes none of it.
type Persistence interface {
	// Load returns what Save last wrote and its version; no data and an
	// empty version when nothing was written yet.
	Load(ctx context.Context) (data []byte, version string, err error)
	// Save writes data over version and returns the new version; a
	// version that is not the current one is a conflict.
	Save(ctx context.Context, data []byte, version string) (string, error)
}

// MovesConfigMap keeps the moves in a ConfigMap the chart creates empty:
// the descheduler only reads and updates it, so its RBAC names that one
// object and an uninstall removes it.
type MovesConfigMap struct {
	Client          kubernetes.Interface
	Namespace, Name string
}

// Load implements Persistence.
func (m MovesConfigMap) Load(ctx context.Context) ([]byte, string, error) {
	cm, err := m.Client.CoreV1().ConfigMaps(m.Namespace).Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return nil, "", fmt.Errorf("reading ConfigMap %s/%s: %w", m.Namespace, m.Name, err)
	}
	return []byte(cm.Data[moves.Key]), cm.ResourceVersion, nil
}

// Save implements Persistence.
func (m MovesConfigMap) Save(ctx context.Context, data []byte, version string) (string, error) {
	cms := m.Client.CoreV1().ConfigMaps(m.Namespace)
	cm, err := cms.Get(ctx, m.Name, metav1.GetOptions{})
	if err != nil {
		return "", fmt.Errorf("reading ConfigMap %s/%s: %w", m.Namespace, m.Name, err)
	}
	if cm.ResourceVersion != version {
		return "", apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, m.Name, fmt.Errorf("written by another replica since version %s", version))
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[moves.Key] = string(data)
	out, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
	if err != nil {
		return "", fmt.Errorf("writing ConfigMap %s/%s: %w", m.Namespace, m.Name, err)
	}
	return out.ResourceVersion, nil
}

// encode writes the newest maxKeptMoves moves, oldest first; nothing at
// all when there are none.
func (s *Store) encode() ([]byte, error) {
	if len(s.moves) == 0 {
		return nil, nil
	}
	kept := s.moves[max(0, len(s.moves)-maxKeptMoves):]
	out := make([]moves.Saved, 0, len(kept))
	for _, m := range kept {
		back := m.landedBack.UnsortedList()
		slices.Sort(back)
		out = append(out, moves.Saved{Workload: m.workload, Pod: m.pod, Source: m.source, Destination: m.destination,
			At: m.at.UTC(), SourceLoad: m.sourceLoad, DestinationLoad: m.destinationLoad,
			Replacement: m.replacement, LandedOn: m.landedOn, LandedBack: back, Hot: m.hot, Pull: m.pull,
			Why: m.why, SourceUsage: m.sourceUsage, DestinationUsage: m.destinationUsage, SourceAfter: m.sourceAfter})
	}
	return moves.Encode(out)
}

// merge adds the moves in data that the Store does not hold; for one it
// holds, it keeps whichever knows where the replacement landed. Moves stay
// in the order they were made.
func (s *Store) merge(data []byte) (int, error) {
	saved, err := moves.Decode(data)
	if err != nil {
		return 0, err
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
			m.landedBack.Insert(sm.LandedBack...)
			continue
		}
		s.moves = append(s.moves, &move{workload: sm.Workload, pod: sm.Pod, source: sm.Source, destination: sm.Destination, at: sm.At,
			sourceLoad: sm.SourceLoad, destinationLoad: sm.DestinationLoad, replacement: sm.Replacement, landedOn: sm.LandedOn,
			landedBack: sets.New(sm.LandedBack...), hot: sm.Hot, pull: sm.Pull, why: sm.Why, sourceUsage: sm.SourceUsage,
			destinationUsage: sm.DestinationUsage, sourceAfter: sm.SourceAfter})
		added++
	}
	slices.SortStableFunc(s.moves, func(a, b *move) int { return a.at.Compare(b.at) })
	return added, nil
}

// Recall reads the moves kept in the cluster into the Store, when they
// changed since this process last read or wrote them: the first cycle of a
// new leader, or of a restarted descheduler, starts from its predecessor's
// memory. A failure leaves the Store as it is and is logged; the cycle goes
// on with what this process remembers. Callers hold the Store's lock.
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
	if version == s.version {
		return
	}
	added, err := s.merge(data)
	if err != nil {
		logger.Error(err, "Reading the moves kept in the cluster; going on with this process's memory only")
		return
	}
	s.version = version
	if enc, err := s.encode(); err == nil && bytes.Equal(enc, data) {
		// Nothing this process adds: no need to write it back.
		s.saved = data
	}
	if added > 0 {
		logger.Info("Recalled moves kept in the cluster", "moves", added, "remembered", len(s.moves))
	}
}

// Keep writes the Store's moves to the cluster when they changed since
// they were last written. A conflict (another replica wrote meanwhile) is
// merged at the next Recall and written then. Callers hold the Store's lock.
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
	if bytes.Equal(data, s.saved) {
		return
	}
	version, err := d.Persist.Save(ctx, data, s.version)
	if err != nil {
		logger.Error(err, "Keeping the moves in the cluster; a restart would forget the newest", "moves", len(s.moves))
		return
	}
	s.version, s.saved = version, data
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
		if m.sourceUsage != nil {
			mv.ExpectedSource = m.sourceUsage.Add(m.sourceLoad, -1)
		}
		if m.destinationUsage != nil {
			mv.ExpectedDestination = m.destinationUsage.Add(m.destinationLoad, 1)
		}
		out = append(out, mv)
	}
	return out, nil
}
