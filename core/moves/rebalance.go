package moves

import (
	"time"
)

// Rebalance is the descheduler's plan: the placement of the movable pods
// it moves the cluster towards, the best it found, and the moves still to
// make. It is kept with the moves, so that a restarted descheduler goes on
// with it and `ballast explain` can show it.
type Rebalance struct {
	// ID names the plan in the notes of its moves: plans are numbered
	// from 1; Made is when it was made.
	ID   string    `json:"id"`
	Made time.Time `json:"made"`
	// Spread is the cluster's utilisation spread (the highest node's
	// utilisation minus the lowest's, in points) when the plan was made;
	// Best the spread of the best placement found; After what the plan's
	// moves are expected to leave.
	Spread float64 `json:"spread"`
	Best   float64 `json:"best"`
	After  float64 `json:"after"`
	// Checked is the last cycle that judged the plan; Now the cluster's
	// spread then, and NowBest the best placement's.
	Checked time.Time `json:"checked"`
	Now     float64   `json:"now"`
	NowBest float64   `json:"nowBest"`
	// Nodes are the nodes the plan placed pods on: those with fresh usage
	// that took pods when it was made.
	Nodes []string `json:"nodes,omitempty"`
	// Target is the placement the plan moves the cluster towards: how many
	// pods of each workload each node holds.
	Target []Placed `json:"target,omitempty"`
	// Moves are the moves still to make as Checked found them, in order.
	Moves []Step `json:"moves,omitempty"`
	// Done counts the moves made for the plan.
	Done int `json:"done,omitempty"`
	// Finished is when the plan's last move was made or the cluster
	// reached its target; zero while moves are left.
	Finished time.Time `json:"finished,omitempty"`
	// Ended says why a plan was left before it finished (the cluster
	// changed).
	Ended string `json:"ended,omitempty"`
}

// Placed is how many pods of Workload a plan has on Node.
type Placed struct {
	Node     string   `json:"node"`
	Workload Workload `json:"workload"`
	Pods     int      `json:"pods"`
}

// Step is one move of a plan: a pod of Workload off From, its replacement
// expected on To.
type Step struct {
	Workload Workload `json:"workload"`
	From     string   `json:"from"`
	To       string   `json:"to"`
}
