package moves

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/ballast-sched/ballast/core/usage"
)

// Key is the key of the moves ConfigMap's data that holds the moves.
const Key = "moves.json"

// Load is usage per resource in percent of a node's allocatable.
type Load = map[usage.Resource]float64

// Saved is one move as the descheduler keeps it in the cluster.
type Saved struct {
	Workload Workload  `json:"workload"`
	Pod      types.UID `json:"pod,omitempty"`
	// Source is the node the pod was evicted from, Destination the node
	// its replacement was planned on, LandedOn where the replacement
	// (Replacement) ran; empty until it did.
	Source      string    `json:"source"`
	Destination string    `json:"destination"`
	At          time.Time `json:"at"`
	// SourceLoad and DestinationLoad are the pod's estimated share of each
	// node's allocatable.
	SourceLoad      Load        `json:"sourceLoad,omitempty"`
	DestinationLoad Load        `json:"destinationLoad,omitempty"`
	Replacement     types.UID   `json:"replacement,omitempty"`
	LandedOn        string      `json:"landedOn,omitempty"`
	LandedBack      []types.UID `json:"landedBack,omitempty"`
	// Existed holds the pods of the workload listed just before the move,
	// none of which is its replacement; kept until the replacement runs.
	Existed []types.UID `json:"existed,omitempty"`
	// Hot is set for a move that cooled a node over its high thresholds,
	// Pull for one that a node far below the cluster's mean pulled.
	Hot  bool `json:"hot,omitempty"`
	Pull bool `json:"pull,omitempty"`
	// Why the pod was moved, both nodes' usage then, and the source's
	// usage once the replacement ran.
	Why              string `json:"why,omitempty"`
	SourceUsage      Load   `json:"sourceUsage,omitempty"`
	DestinationUsage Load   `json:"destinationUsage,omitempty"`
	SourceAfter      Load   `json:"sourceAfter,omitempty"`
}

// Kept is everything the descheduler keeps in its ConfigMap: its moves,
// oldest first, and its plan.
type Kept struct {
	Moves []Saved    `json:"moves"`
	Plan  *Rebalance `json:"plan,omitempty"`
}

// Encode writes moves, oldest first, as they are kept in the cluster;
// nothing at all when there are none.
func Encode(moves []Saved) ([]byte, error) { return EncodeKept(Kept{Moves: moves}) }

// EncodeKept writes k as it is kept in the cluster; nothing at all when it
// holds nothing.
func EncodeKept(k Kept) ([]byte, error) {
	if len(k.Moves) == 0 && k.Plan == nil {
		return nil, nil
	}
	return json.Marshal(k)
}

// Decode reads the moves kept in the cluster (the Key of the moves
// ConfigMap), in the order they were written; none for empty data.
func Decode(data []byte) ([]Saved, error) {
	k, err := DecodeKept(data)
	return k.Moves, err
}

// DecodeKept reads what the descheduler keeps in the cluster; nothing for
// empty data. Its times are in UTC, as the descheduler writes them, so that
// what it reads encodes again: a time that cannot (its year in UTC outside
// 0–9999) is an error.
func DecodeKept(data []byte) (Kept, error) {
	var out Kept
	if len(bytes.TrimSpace(data)) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return Kept{}, fmt.Errorf("decoding the remembered moves: %w", err)
	}
	if err := out.inUTC(); err != nil {
		return Kept{}, fmt.Errorf("decoding the remembered moves: %w", err)
	}
	return out, nil
}

// inUTC puts every time of k in UTC. Go's decoder reads offsets its encoder
// refuses to write (+24:00, -23:60), and a year in 0–9999 that UTC takes
// out of that range: either would make every later EncodeKept fail, and the
// descheduler keep no move again.
func (k *Kept) inUTC() error {
	for i := range k.Moves {
		if err := toUTC(&k.Moves[i].At); err != nil {
			return fmt.Errorf("moves[%d].at: %w", i, err)
		}
	}
	if p := k.Plan; p != nil {
		for _, f := range []struct {
			name string
			t    *time.Time
		}{{"made", &p.Made}, {"checked", &p.Checked}, {"finished", &p.Finished}} {
			if err := toUTC(f.t); err != nil {
				return fmt.Errorf("plan.%s: %w", f.name, err)
			}
		}
	}
	return nil
}

// toUTC puts *t in UTC, where its year must be one RFC 3339 writes.
func toUTC(t *time.Time) error {
	*t = t.UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		return fmt.Errorf("%s is outside the years 0–9999 the moves are written in", t.Format(time.RFC3339Nano))
	}
	return nil
}
